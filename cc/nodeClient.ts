/**
 * The CC's narrow interface to its NCs (STYLE habit 4), one real adapter over the wire, and the
 * boundary where every NC failure becomes a CcErrors code. Unit tests plug in a hand-written fake.
 */
import { FerryError } from '../shared/errors/registry.js';
import { NC_OPS, type NcInstance, type NcNode, type NcRequest, type NcResponse, type TerminateReason } from '../shared/protocol/ncProtocol.js';
import {
  ncMigrateRequestSchema, ncMigrateResponseSchema, type NcMigrateRequest,
} from '../shared/protocol/migrationProtocol.js';
import { TypedClient } from '../shared/protocol/typedClient.js';
import type { NodeState } from '../shared/protocol/common.js';
import type { WireTransport } from '../shared/wire/transport.js';
import type { z } from 'zod';
import { CcErrors } from './errors.js';

export interface NodeCallOptions {
  readonly timeoutMs?: number;
}

/** Every method rejects with a CcErrors FerryError (see translateNodeError), bugs aside. */
export interface NodeClient {
  describe(host: string, opts?: NodeCallOptions): Promise<NcNode>;
  runInstance(host: string, req: NcRequest<'ncRunInstance'>): Promise<NcInstance>;
  terminateInstance(host: string, instanceId: string, reason?: TerminateReason): Promise<NcResponse<'ncTerminateInstance'>>;
  /** Pause (paused: true) or resume an instance the NC runs (ncPauseInstance); idempotent. */
  pauseInstance(host: string, req: NcRequest<'ncPauseInstance'>): Promise<NcResponse<'ncPauseInstance'>>;
  /** Starts again an instance the NC holds whose domain is shut off (ncStartInstance); running ones are answered as is. */
  startInstance(host: string, instanceId: string, userStart?: boolean): Promise<NcInstance>;
  /** Stops an instance (ncStopInstance): answered once its domain is off. */
  stopInstance(host: string, req: NcRequest<'ncStopInstance'>): Promise<NcResponse<'ncStopInstance'>>;
  /** Reboots a running instance in place (ncRebootInstance). */
  rebootInstance(host: string, instanceId: string): Promise<NcResponse<'ncRebootInstance'>>;
  modifyNode(host: string, stateName: NodeState): Promise<NcResponse<'ncModifyNode'>>;
  /** Volumes (issue 18): answers once the NC attached it and persisted the attachment. */
  attachVolume(host: string, req: NcRequest<'ncAttachVolume'>): Promise<NcResponse<'ncAttachVolume'>>;
  detachVolume(host: string, req: NcRequest<'ncDetachVolume'>): Promise<NcResponse<'ncDetachVolume'>>;
  /** Quarantine or release (issue 18): answered after the NC persisted it. */
  quarantineNode(host: string, req: NcRequest<'ncQuarantineNode'>): Promise<NcResponse<'ncQuarantineNode'>>;
  /** Host HA: this NC looks at another host's writes on shared storage (ncCheckActivity). */
  checkActivity(host: string, req: NcRequest<'ncCheckActivity'>, opts?: NodeCallOptions): Promise<NcResponse<'ncCheckActivity'>>;
  /** Every live-migration step (migrationProtocol.ts), on the source or the destination NC. */
  migrate(host: string, req: NcMigrateRequest, opts?: NodeCallOptions): Promise<NcMigrateResponse>;
}

export type NcMigrateResponse = z.infer<typeof ncMigrateResponseSchema>;

/** The NC's live-migration operation, until it is part of NC_OPS (same name, same schemas). */
const MIGRATION_OPS = {
  ncMigrateInstances: { request: ncMigrateRequestSchema, response: ncMigrateResponseSchema },
} as const;

/** Connection errors that prove the request never reached the NC. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v ?? '');
}

/**
 * Turns a failed NC call into the CC's code for it. Pure; exported for its table-driven test.
 * Anything that is not a FerryError is our own bug (e.g. a request that broke the contract) and
 * is passed through untouched so the wire server logs it as one.
 */
export function translateNodeError(e: unknown, host: string, operation: string): unknown {
  if (!(e instanceof FerryError)) return e;
  const f = e.fields;
  switch (e.code) {
    case 'PeerUnreachable':
      return CcErrors.make('NodeUnreachable', { host, detail: str(f.detail), maybeDelivered: !NEVER_SENT.has(str(f.detail)) });
    case 'PeerTimeout':
      return CcErrors.make('NodeUnreachable', { host, detail: `no answer to ${operation} within ${str(f.timeoutMs)} ms`, maybeDelivered: true });
    case 'PeerProtocolError':
      return CcErrors.make('NodeProtocolError', { host, operation, detail: str(f.detail) });
    case 'RemoteFault':
      return translateRemoteFault(str(f.remoteCode), str(f.remoteMessage), host, operation);
    default:
      // Already one of ours (a fake, or a re-thrown translation): keep it.
      if (CcErrors.has(e.code)) return e;
      return CcErrors.make('NodeProtocolError', { host, operation, detail: `${e.code}: ${e.message}` });
  }
}

function translateRemoteFault(code: string, message: string, host: string, operation: string): FerryError {
  switch (code) {
    case 'NodeDisabled':
      return CcErrors.make('NodeDisabled', { host });
    case 'InsufficientCapacity':
      return CcErrors.make('NodeFull', { host, detail: message });
    case 'InstanceNotFound':
      return CcErrors.withMessage('InstanceNotFound', message, { host });
    case 'InstanceExists':
      return CcErrors.withMessage('InstanceExists', message, { host });
    case 'HypervisorUnavailable':
      return CcErrors.make('NodeUnhealthy', { host, detail: message });
    // Its own code all the way to the administrator: the fix is on that node's disk.
    case 'StateWriteFailed':
      return CcErrors.withMessage('StateWriteFailed', message, { host });
    case 'InstanceNotRunning':
    case 'NodeQuarantined':
    case 'NodeNotQuarantined':
    case 'InstanceNotStartable':
    case 'InstanceNotPausable':
    case 'InstanceStateConflict':
    case 'MigrationInProgress':
    case 'MigrationNotPrepared':
    case 'VolumeConflict':
    case 'VolumeNotAttached':
      return CcErrors.withMessage(code, message, { host });
    // An NC refuses to terminate (or re-run) an instance that is moving.
    case 'InstanceMigrating':
      return CcErrors.withMessage('MigrationInProgress', message, { host });
    // Replicas (issue 21): this CC was deposed; a newer leader reached the node first.
    case 'StaleLeaderEpoch':
      return CcErrors.make('NodeSawNewerLeader', { host, operation, detail: message });
    default:
      return CcErrors.make('NodeFault', { host, operation, remoteCode: code, remoteMessage: message });
  }
}

/**
 * The real adapter: typed NC_OPS calls over a WireTransport (HttpWireTransport at NC_PATH).
 * `instanceTimeoutMs`: the bound on a call that starts or stops a guest. Those wait for the
 * hypervisor (a QEMU start takes seconds on a busy host), so they get their own bound rather than
 * the transport's default for quick calls; a give-up there is an uncertain answer the caller must settle.
 */
export class WireNodeClient implements NodeClient {
  private readonly client: TypedClient<typeof NC_OPS>;
  private readonly migrations: TypedClient<typeof MIGRATION_OPS>;

  constructor(transport: WireTransport, private readonly endpointOf: (host: string) => string, private readonly instanceTimeoutMs?: number) {
    this.client = new TypedClient(transport, NC_OPS);
    this.migrations = new TypedClient(transport, MIGRATION_OPS);
  }

  private async call<O extends keyof typeof NC_OPS>(host: string, op: O, req: NcRequest<O>, opts?: NodeCallOptions): Promise<NcResponse<O>> {
    try {
      return await this.client.call(this.endpointOf(host), op, req, opts);
    } catch (e) {
      throw translateNodeError(e, host, op);
    }
  }

  describe(host: string, opts?: NodeCallOptions): Promise<NcNode> {
    return this.call(host, 'ncDescribeResource', {}, opts);
  }

  async runInstance(host: string, req: NcRequest<'ncRunInstance'>): Promise<NcInstance> {
    return (await this.call(host, 'ncRunInstance', req, this.guestCall())).instance;
  }

  terminateInstance(host: string, instanceId: string, reason?: TerminateReason): Promise<NcResponse<'ncTerminateInstance'>> {
    return this.call(host, 'ncTerminateInstance', { instanceId, ...(reason !== undefined ? { reason } : {}) }, this.guestCall());
  }

  /** Starts a guest: the per-operation instance timeout, like a run. */
  async startInstance(host: string, instanceId: string, userStart = false): Promise<NcInstance> {
    return (await this.call(host, 'ncStartInstance', { instanceId, ...(userStart ? { userStart } : {}) }, this.guestCall())).instance;
  }

  /** A graceful shutdown may wait for its guest: the instance timeout, like a start. */
  stopInstance(host: string, req: NcRequest<'ncStopInstance'>): Promise<NcResponse<'ncStopInstance'>> {
    return this.call(host, 'ncStopInstance', req, this.guestCall());
  }

  rebootInstance(host: string, instanceId: string): Promise<NcResponse<'ncRebootInstance'>> {
    return this.call(host, 'ncRebootInstance', { instanceId }, this.guestCall());
  }

  private guestCall(): NodeCallOptions | undefined {
    return this.instanceTimeoutMs === undefined ? undefined : { timeoutMs: this.instanceTimeoutMs };
  }

  modifyNode(host: string, stateName: NodeState): Promise<NcResponse<'ncModifyNode'>> {
    return this.call(host, 'ncModifyNode', { stateName });
  }

  /** Pauses or resumes a guest: the instance timeout, as its hypervisor call may wait like a start. */
  pauseInstance(host: string, req: NcRequest<'ncPauseInstance'>): Promise<NcResponse<'ncPauseInstance'>> {
    return this.call(host, 'ncPauseInstance', req, this.guestCall());
  }

  attachVolume(host: string, req: NcRequest<'ncAttachVolume'>): Promise<NcResponse<'ncAttachVolume'>> {
    return this.call(host, 'ncAttachVolume', req, this.guestCall());
  }

  detachVolume(host: string, req: NcRequest<'ncDetachVolume'>): Promise<NcResponse<'ncDetachVolume'>> {
    return this.call(host, 'ncDetachVolume', req, this.guestCall());
  }

  quarantineNode(host: string, req: NcRequest<'ncQuarantineNode'>): Promise<NcResponse<'ncQuarantineNode'>> {
    return this.call(host, 'ncQuarantineNode', req);
  }

  checkActivity(host: string, req: NcRequest<'ncCheckActivity'>, opts?: NodeCallOptions): Promise<NcResponse<'ncCheckActivity'>> {
    return this.call(host, 'ncCheckActivity', req, opts);
  }

  async migrate(host: string, req: NcMigrateRequest, opts?: NodeCallOptions): Promise<NcMigrateResponse> {
    try {
      return await this.migrations.call(this.endpointOf(host), 'ncMigrateInstances', req, opts);
    } catch (e) {
      throw translateNodeError(e, host, 'ncMigrateInstances');
    }
  }
}
