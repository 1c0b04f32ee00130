import { describe, expect, it } from 'vitest';
import { translateNodeError, WireNodeClient } from '../../cc/nodeClient.js';
import { CcErrors } from '../../cc/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { WireErrors } from '../../shared/wire/errors.js';
import type { CallOptions, WireTransport } from '../../shared/wire/transport.js';
import { decodeMessage, encodeMessage, type WireObject } from '../../shared/wire/xmlCodec.js';
import { ncMigrateRequestSchema, ncMigrateResponseSchema, type MigrationPlan } from '../../shared/protocol/migrationProtocol.js';
import { DEFAULT_LIMITS } from '../../cc/migration/settings.js';
import { slots } from './fakeNodes.js';

const H = '127.0.11.1';
const remote = (remoteCode: string, remoteMessage = 'm'): FerryError =>
  WireErrors.make('RemoteFault', { peer: `http://${H}:8775`, operation: 'ncRunInstance', remoteCode, remoteMessage, remoteStatus: 409 });

describe('translateNodeError (the NC boundary)', () => {
  it.each<[string, FerryError, string, Record<string, unknown>]>([
    ['NodeDisabled', remote('NodeDisabled'), 'NodeDisabled', { host: H }],
    ['InsufficientCapacity', remote('InsufficientCapacity', 'needs 2 cores'), 'NodeFull', { host: H, detail: 'needs 2 cores' }],
    ['InstanceNotFound', remote('InstanceNotFound'), 'InstanceNotFound', { host: H }],
    ['InstanceExists', remote('InstanceExists'), 'InstanceExists', { host: H }],
    ['HypervisorUnavailable', remote('HypervisorUnavailable', 'libvirtd down'), 'NodeUnhealthy', { detail: 'libvirtd down' }],
    ['StateWriteFailed (its own code: the fix is on that disk)', remote('StateWriteFailed', 'disk full'), 'StateWriteFailed', { host: H }],
    ['another NC code', remote('HypervisorRefused', 'no'), 'NodeFault', { remoteCode: 'HypervisorRefused', remoteMessage: 'no' }],
    ['InstanceNotRunning (source prepare)', remote('InstanceNotRunning'), 'InstanceNotRunning', { host: H }],
    ['InstanceNotStartable (a start of a terminated instance)', remote('InstanceNotStartable'), 'InstanceNotStartable', { host: H }],
    ['MigrationInProgress (source prepare)', remote('MigrationInProgress'), 'MigrationInProgress', { host: H }],
    ['MigrationNotPrepared (commit, replan)', remote('MigrationNotPrepared'), 'MigrationNotPrepared', { host: H }],
    ['InstanceMigrating (terminate while moving)', remote('InstanceMigrating'), 'MigrationInProgress', { host: H }],
    ['MigrationPlanInvalid (our bug, carried)', remote('MigrationPlanInvalid', 'item goes to its own source'), 'NodeFault', { remoteCode: 'MigrationPlanInvalid' }],
    ['connection refused', WireErrors.make('PeerUnreachable', { peer: H, detail: 'ECONNREFUSED' }), 'NodeUnreachable', { maybeDelivered: false }],
    ['connection reset', WireErrors.make('PeerUnreachable', { peer: H, detail: 'ECONNRESET' }), 'NodeUnreachable', { maybeDelivered: true }],
    ['timeout', WireErrors.make('PeerTimeout', { peer: H, operation: 'x', timeoutMs: 5 }), 'NodeUnreachable', { maybeDelivered: true }],
    ['garbled answer', WireErrors.make('PeerProtocolError', { peer: H, operation: 'x', detail: 'not xml' }), 'NodeProtocolError', { detail: 'not xml' }],
  ])('%s', (_name, err, code, fields) => {
    const out = translateNodeError(err, H, 'ncRunInstance') as FerryError;
    expect(out.code).toBe(code);
    expect(CcErrors.has(out.code)).toBe(true);
    expect(out.fields).toMatchObject(fields);
  });

  it('passes our own bugs through untouched', () => {
    const bug = new TypeError('x is undefined');
    expect(translateNodeError(bug, H, 'ncRunInstance')).toBe(bug);
  });
});

class ScriptedTransport implements WireTransport {
  readonly seen: { endpoint: string; operation: string; body: WireObject; opts?: CallOptions }[] = [];
  constructor(private readonly answer: (op: string) => WireObject | Error) {}
  async call(endpoint: string, operation: string, body: WireObject, opts?: CallOptions): Promise<WireObject> {
    this.seen.push({ endpoint, operation, body, ...(opts ? { opts } : {}) });
    const a = this.answer(operation);
    if (a instanceof Error) throw a;
    return a;
  }
}

const NODE: WireObject = { host: H, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: { ...slots(2) }, used: { ...slots(0) }, instances: [] };

describe('WireNodeClient', () => {
  it('calls the NC contract at the node\'s endpoint and validates the answer', async () => {
    const t = new ScriptedTransport(() => NODE);
    const c = new WireNodeClient(t, (h) => `http://${h}:8775`);
    await expect(c.describe(H, { timeoutMs: 250 })).resolves.toEqual(NODE);
    expect(t.seen).toEqual([{ endpoint: `http://${H}:8775`, operation: 'ncDescribeResource', body: {}, opts: { timeoutMs: 250 } }]);
  });

  it('a call that starts or stops a guest gets the instance bound; other calls the transport default', async () => {
    const INSTANCE: WireObject = { instanceId: 'i-00000001', state: 'running' };
    const t = new ScriptedTransport((op) => (op === 'ncDescribeResource' ? NODE : op === 'ncTerminateInstance' ? { currentState: 'terminated', previousState: 'running' } : { instance: INSTANCE }));
    const c = new WireNodeClient(t, (h) => `http://${h}:8775`, 45_000);
    await c.runInstance(H, {
      instanceId: 'i-00000001', reservationId: 'r-00000001', imageId: 'emi-0a1b2c3d', ownerId: 'admin', vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, launchTime: 1,
    }).catch(() => undefined);
    await c.terminateInstance(H, 'i-00000001').catch(() => undefined);
    await c.describe(H);
    expect(t.seen.map((s) => [s.operation, s.opts?.timeoutMs])).toEqual([
      ['ncRunInstance', 45_000], ['ncTerminateInstance', 45_000], ['ncDescribeResource', undefined],
    ]);
  });

  it('an answer outside the contract is NodeProtocolError; a refusal is translated', async () => {
    const bad = new WireNodeClient(new ScriptedTransport(() => ({ host: H })), (h) => `http://${h}:8775`);
    await expect(bad.describe(H)).rejects.toMatchObject({ code: 'NodeProtocolError', fields: { host: H } });
    const refusing = new WireNodeClient(new ScriptedTransport(() => remote('NodeDisabled')), (h) => `http://${h}:8775`);
    await expect(refusing.modifyNode(H, 'disabled')).rejects.toMatchObject({ code: 'NodeDisabled' });
  });
});

describe('WireNodeClient.migrate (ncMigrateInstances)', () => {
  const plan: MigrationPlan = {
    migrationId: 'mig-0000000a', source: H, createdAt: 1,
    request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false },
    limits: DEFAULT_LIMITS, timeouts: { prepareMs: 1, readyMs: 1, migratingBaseMs: 1, migratingPerGiBMs: 1, stallMs: 1 }, cancelRequested: false,
    items: [
      { instanceId: 'i-00000001', vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, destination: '127.0.11.2', state: 'queued', attempts: 1, queuedAt: 1 },
      { instanceId: 'i-00000002', vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, destination: '', state: 'failed', attempts: 0, error: 'not placed', queuedAt: 1, endedAt: 1 },
    ],
  };

  it('sends a contract-valid request and validates the answer; a plan survives the XML codec unchanged', async () => {
    const req = { action: 'prepare', role: 'source', plan } as const;
    const wire = await decodeMessage(encodeMessage('ncMigrateInstances', req as unknown as WireObject));
    expect(ncMigrateRequestSchema.parse(wire.body)).toEqual(req);
    const t = new ScriptedTransport(() => ({ migrationId: plan.migrationId, plan } as unknown as WireObject));
    const c = new WireNodeClient(t, (h) => `http://${h}:8775`);
    await expect(c.migrate(H, req)).resolves.toEqual({ migrationId: plan.migrationId, plan });
    expect(t.seen[0]).toMatchObject({ endpoint: `http://${H}:8775`, operation: 'ncMigrateInstances' });
    const back = await decodeMessage(encodeMessage('ncMigrateInstancesResponse', { migrationId: plan.migrationId, plan } as unknown as WireObject));
    expect(ncMigrateResponseSchema.parse(back.body)).toEqual({ migrationId: plan.migrationId, plan });
  });

  it('each action variant validates (the two prepare variants share the action)', () => {
    for (const req of [
      { action: 'prepare', role: 'destination', migrationId: plan.migrationId, allowDisabled: false, incoming: {
        migrationId: plan.migrationId, instanceId: 'i-00000001', source: H, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'a', launchTime: 1, vmType: plan.items[0]!.vmType,
      } },
      { action: 'commit', migrationId: plan.migrationId, instanceId: 'i-00000001', destination: '127.0.11.2', destinationUri: 'http://127.0.11.2:16509' },
      { action: 'rollback', role: 'destination', migrationId: plan.migrationId, reason: 'x', cancel: false },
      { action: 'replan', migrationId: plan.migrationId, instanceId: 'i-00000001', destination: '' },
    ]) expect(ncMigrateRequestSchema.safeParse(req).success, JSON.stringify(req)).toBe(true);
    expect(ncMigrateRequestSchema.safeParse({ action: 'prepare', role: 'destination', plan }).success).toBe(false);
  });

  it('an NC refusal comes back as the CC\'s code; an answer outside the contract is NodeProtocolError', async () => {
    const refusing = new WireNodeClient(new ScriptedTransport(() => remote('MigrationNotPrepared', 'no such item')), (h) => `http://${h}:8775`);
    await expect(refusing.migrate(H, { action: 'commit', migrationId: plan.migrationId, instanceId: 'i-00000001', destination: '127.0.11.2', destinationUri: 'u' }))
      .rejects.toMatchObject({ code: 'MigrationNotPrepared', message: 'no such item' });
    const garbled = new WireNodeClient(new ScriptedTransport(() => ({ migrationId: 'nope' })), (h) => `http://${h}:8775`);
    await expect(garbled.migrate(H, { action: 'rollback', role: 'source', migrationId: plan.migrationId, reason: 'r', cancel: true }))
      .rejects.toMatchObject({ code: 'NodeProtocolError', fields: { operation: 'ncMigrateInstances' } });
  });
});
