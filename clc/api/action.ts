/**
 * One admin action: `parse` validates its parameters once into a frozen typed input (throwing
 * coded errors), `run` does the work and returns the response body. Parse is pure so each action's
 * validation table is tested without a server.
 */
import type { IdSource } from '../../shared/model/ids.js';
import { ClcErrors } from '../core/errors.js';
import type { KeyedMutex } from '../../shared/keyedMutex.js';
import type { Leadership, ReplicaProbe } from '../core/leadership.js';
import type { OperationContext } from '../core/operationContext.js';
import type { VolumeBackend } from '../core/volumeBackend.js';
import { showKey } from '../core/showKey.js';
import type { EventStream } from '../events/eventStream.js';
import type { HaControl } from '../ha/haControl.js';
import type { Principal } from './auth.js';
import type { ParamMap } from './queryParams.js';
import type { XmlObject } from './xmlResponse.js';

/** Where clients reach a CLC started with the default flags. */
export const DEFAULT_CLC_ORIGIN = 'http://127.0.0.1:8773';

/** A core operation's context (clc/core/operationContext.ts) plus who asked, for the actions that need it. */
export interface ActionContext extends OperationContext {
  /** Hex source for new reservation and instance ids. */
  readonly ids: IdSource;
  readonly principal: Principal;
  /** Where clients reach this CLC (`http://127.0.0.1:8773`): DescribeRegions' endpoint, the CLC's service uri. */
  readonly origin: string;
  /** Whether this CLC replica leads and which replicas campaign (issue 21); absent: the single CLC (unit tests). */
  readonly leadership?: Leadership;
  /** Whether another CLC replica answers now (DescribeServices at a follower); absent: nobody is asked. */
  readonly replicaProbe?: ReplicaProbe;
  /** One request at a time per key, across the CLC's requests: RunInstances holds its ClientToken's. */
  readonly keyLocks: KeyedMutex;
  /** Host HA's operator side (clc/ha/haControl.ts); absent when the CLC was built without it. */
  readonly ha?: HaControl;
  /** Where volumes' data lives (clc/core/volumeBackend.ts); absent: the volume actions answer Unsupported. */
  readonly volumes?: VolumeBackend;
  /** The event stream (clc/events/eventStream.ts); absent: DescribeEvents answers ServiceUnavailable. */
  readonly events?: EventStream;
}

export interface ActionSpec<P> {
  /** The response's XML namespace (EC2's, or Eucalyptus's for Eucalyptus-only actions). */
  readonly namespace: string;
  /**
   * EC2's `DryRun=true|false`: the request is validated (and was authorized), then answered
   * DryRunOperation. The EC2 actions take it; for the others `DryRun` is an ordinary parameter
   * (DescribeHostHA has its own), unknown unless their schema names it.
   */
  readonly acceptsDryRun?: boolean;
  parse(params: ParamMap): P;
  run(input: P, ctx: ActionContext): Promise<XmlObject>;
}

/** An action with its input type erased, as the dispatcher holds it. */
export interface Action {
  readonly namespace: string;
  readonly acceptsDryRun: boolean;
  handle(params: ParamMap, ctx: ActionContext): Promise<XmlObject>;
}

const DRY_RUN = 'DryRun';

/** EC2's DryRun flag taken out of `params`: whether it asks for a dry run, and the rest. */
function splitDryRun(params: ParamMap): { dryRun: boolean; rest: ParamMap } {
  if (!Object.prototype.hasOwnProperty.call(params, DRY_RUN)) return { dryRun: false, rest: params };
  const { [DRY_RUN]: flag, ...rest } = params;
  const lower = typeof flag === 'string' ? flag.toLowerCase() : '';
  if (lower !== 'true' && lower !== 'false') {
    throw ClcErrors.make('InvalidParameterValue', { parameter: DRY_RUN, value: typeof flag === 'string' ? showKey(flag) : '(a list or group)', detail: 'expected true or false' });
  }
  return { dryRun: lower === 'true', rest: Object.freeze(Object.assign(Object.create(null) as Record<string, ParamMap[string]>, rest)) };
}

export function defineAction<P>(spec: ActionSpec<P>): ActionSpec<P> & Action {
  const handle = (params: ParamMap, ctx: ActionContext): Promise<XmlObject> => {
    if (spec.acceptsDryRun !== true) return spec.run(spec.parse(params), ctx);
    const { dryRun, rest } = splitDryRun(params);
    const input = spec.parse(rest);
    // Parsed first, so a bad request gets its own code; authorization ran before dispatch.
    if (dryRun) throw ClcErrors.make('DryRunOperation');
    return spec.run(input, ctx);
  };
  return Object.freeze({ ...spec, acceptsDryRun: spec.acceptsDryRun ?? false, handle });
}
