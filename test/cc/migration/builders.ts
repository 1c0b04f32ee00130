/** Small builders for the pure migration tests: nodes, plans, items and records as the NCs report them. */
import type { MigrationNode } from '../../../cc/migration/nodes.js';
import { DEFAULT_LIMITS } from '../../../cc/migration/settings.js';
import { add, ZERO, type Resources } from '../../../shared/model/resources.js';
import type { Incoming, MigrationPlan, PlanItem } from '../../../shared/protocol/migrationProtocol.js';
import type { NcInstance } from '../../../shared/protocol/ncProtocol.js';
import { instance, SMALL, slots } from '../fakeNodes.js';

export const S = '127.0.11.1';
export const D1 = '127.0.11.2';
export const D2 = '127.0.11.3';
export const D3 = '127.0.11.4';
export const MIG = 'mig-0000000a';
export const MIG2 = 'mig-0000000b';
export const id = (n: number): string => `i-${n.toString(16).padStart(8, '0')}`;

export const TIMEOUTS = { prepareMs: 1000, readyMs: 1000, migratingBaseMs: 1000, migratingPerGiBMs: 1000, stallMs: 500 } as const;

/** Fields of a node to set; `running` is shorthand for its instances. */
export type NodeOver = Partial<MigrationNode> & { running?: NcInstance[] };
export type PlanOver = Omit<Partial<MigrationPlan>, 'request'> & { request?: Partial<MigrationPlan['request']> };

export function node(host: string, over: NodeOver = {}): MigrationNode {
  const instances = over.instances ?? over.running ?? [];
  const incoming = over.incoming ?? [];
  const { running: _r, ...rest } = over;
  const live = instances.filter((i) => i.state !== 'terminated').reduce<Resources>((a, i) => add(a, i.vmType), ZERO);
  const committed = incoming.reduce<Resources>((a, r) => add(a, r.vmType), live);
  return {
    host, enabled: true, reachable: true, healthy: true, capacity: slots(4), committed, plans: [], migrationsKnown: true, fenced: false,
    ...rest, instances, incoming,
  };
}

export function running(...ids: string[]): NcInstance[] {
  return ids.map((i) => instance(i));
}

export function item(instanceId: string, destination: string, over: Partial<PlanItem> = {}): PlanItem {
  return { instanceId, vmType: SMALL, destination, state: 'queued', attempts: 1, queuedAt: 0, ...over };
}

export function plan(items: PlanItem[], over: PlanOver = {}): MigrationPlan {
  const { request, ...rest } = over;
  return {
    migrationId: MIG, source: S, createdAt: 0,
    request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false, ...request },
    limits: DEFAULT_LIMITS, timeouts: TIMEOUTS, cancelRequested: false, items, ...rest,
  };
}

export function record(instanceId: string, state: Incoming['state'] = 'ready', over: Partial<Incoming> = {}): Incoming {
  return {
    migrationId: MIG, instanceId, source: S, reservationId: 'r-00000000', imageId: 'emi-00000001', ownerId: 'alice',
    launchTime: 0, vmType: SMALL, state, since: 0, ...over,
  };
}
