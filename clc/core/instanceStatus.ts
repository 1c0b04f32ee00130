/**
 * EC2's instance status checks, read from what Ferry knows about the node an instance runs on. Pure.
 *
 * - System status: the host. `ok` while its CC reaches it and its hypervisor works; `impaired` when
 *   the CC cannot reach it, its hypervisor is broken, or host HA has fenced (or is fencing) it;
 *   `insufficient-data` when the CC has not heard from it since it started or the node listing of
 *   its partition did not answer.
 * - Instance status: the guest as its node reports it: `ok` while running, `initializing` while
 *   pending, `insufficient-data` while its host is unreachable (the last report may be stale).
 * - Events: EC2's `system-maintenance` while the host is in maintenance mode (DisableService) or
 *   the instance is being live-migrated, so an owner sees why without admin tools.
 * Instances not running or pending show `not-applicable` for both checks, as EC2 does.
 */
import type { CcNode } from '../../shared/protocol/ccProtocol.js';
import type { InstanceState } from '../../shared/protocol/common.js';
import { INSTANCE_STATE_CODES, isMigrating, type InstanceView } from './instanceView.js';

export type StatusCheck = 'ok' | 'impaired' | 'insufficient-data' | 'not-applicable' | 'initializing';
/** EC2's one detail per check: `reachability` passed/failed/insufficient-data/initializing. */
export type ReachabilityStatus = 'passed' | 'failed' | 'insufficient-data' | 'initializing';

export interface CheckSummary {
  readonly status: StatusCheck;
  /** Absent when the check is not applicable. */
  readonly reachability?: ReachabilityStatus;
}

export interface StatusEvent {
  readonly code: 'system-maintenance';
  readonly description: string;
}

export interface InstanceStatus {
  readonly view: InstanceView;
  readonly system: CheckSummary;
  readonly instance: CheckSummary;
  readonly events: readonly StatusEvent[];
}

/** What the status checks need to know of the host. */
export interface HostFacts {
  /** The node as its CC lists it; undefined when the listing did not answer or does not have it. */
  readonly node: CcNode | undefined;
  /** Host HA fenced it or is fencing it (clc/ha/hostHaState.ts fencedHostsOf). */
  readonly fenced: boolean;
}

const NOT_APPLICABLE: CheckSummary = Object.freeze({ status: 'not-applicable' });
const INITIALIZING: CheckSummary = Object.freeze({ status: 'initializing', reachability: 'initializing' });
const NO_DATA: CheckSummary = Object.freeze({ status: 'insufficient-data', reachability: 'insufficient-data' });
const OK: CheckSummary = Object.freeze({ status: 'ok', reachability: 'passed' });
const IMPAIRED: CheckSummary = Object.freeze({ status: 'impaired', reachability: 'failed' });

function systemCheck(state: InstanceState, host: HostFacts): CheckSummary {
  if (state !== 'running' && state !== 'pending') return NOT_APPLICABLE;
  if (host.fenced) return IMPAIRED;
  const n = host.node;
  if (n === undefined || (n.reachable && n.nodeState === 'unknown')) return NO_DATA;
  if (!n.reachable || !n.healthy) return IMPAIRED;
  return state === 'pending' ? INITIALIZING : OK;
}

function instanceCheck(state: InstanceState, system: CheckSummary): CheckSummary {
  if (state === 'pending') return INITIALIZING;
  if (state !== 'running') return NOT_APPLICABLE;
  // What the node last said about the guest is all there is: while the host is out of sight it proves nothing.
  return system.status === 'ok' ? OK : NO_DATA;
}

function eventsOf(v: InstanceView, host: HostFacts): StatusEvent[] {
  const events: StatusEvent[] = [];
  if (host.node?.nodeState === 'disabled') {
    events.push({ code: 'system-maintenance', description: `node ${host.node.host} is in maintenance mode: it keeps running its instances and takes no new ones` });
  }
  if (isMigrating(v)) {
    const { source, destination, state } = v.migration;
    events.push({ code: 'system-maintenance', description: `live migration ${source ?? v.host ?? '?'} to ${destination ?? '?'} (${state === 'none' ? 'queued' : state})` });
  }
  return events;
}

export function instanceStatusOf(v: InstanceView, host: HostFacts): InstanceStatus {
  const system = systemCheck(v.state, host);
  return { view: v, system, instance: instanceCheck(v.state, system), events: eventsOf(v, host) };
}

/** EC2's DescribeInstanceStatus filters: what each status offers for it. */
export const INSTANCE_STATUS_FILTERS = Object.freeze({
  'availability-zone': (s: InstanceStatus) => [s.view.partition],
  'instance-state-name': (s: InstanceStatus) => [s.view.state],
  'instance-state-code': (s: InstanceStatus) => [String(INSTANCE_STATE_CODES[s.view.state])],
  'system-status.status': (s: InstanceStatus) => [s.system.status],
  'system-status.reachability': (s: InstanceStatus) => (s.system.reachability ? [s.system.reachability] : []),
  'instance-status.status': (s: InstanceStatus) => [s.instance.status],
  'instance-status.reachability': (s: InstanceStatus) => (s.instance.reachability ? [s.instance.reachability] : []),
  'event.code': (s: InstanceStatus) => s.events.map((e) => e.code),
  'event.description': (s: InstanceStatus) => s.events.map((e) => e.description),
} satisfies Record<string, (s: InstanceStatus) => readonly string[]>);

export type InstanceStatusFilterName = keyof typeof INSTANCE_STATUS_FILTERS;
export const INSTANCE_STATUS_FILTER_NAMES = Object.freeze(Object.keys(INSTANCE_STATUS_FILTERS) as InstanceStatusFilterName[]);

export function isInstanceStatusFilterName(name: string): name is InstanceStatusFilterName {
  return Object.prototype.hasOwnProperty.call(INSTANCE_STATUS_FILTERS, name);
}
