/** The chaos test's outside-in invariant checks, table-driven over hand-made observations: each must fire when broken. */
import { describe, expect, it } from 'vitest';
import type { Incoming, MigrationPlan } from '../../shared/protocol/migrationProtocol.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { checkAnytime, checkSettled, type AdminView, type ChaosLedger, type HostObservation } from './chaosInvariants.js';
import type { HvDomain } from './cloudApi.js';

const CAP = { cores: 2, memoryMiB: 512, diskGiB: 10 };
const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
const [H1, H2] = ['127.0.36.1', '127.0.36.2'];
const [A, B] = ['i-0000000a', 'i-0000000b'];
const MIG = 'mig-0000000c';

const dom = (id: string, state = 'running'): HvDomain => ({ id, state, resources: SMALL });

function nc(host: string, ids: string[], over: Partial<NcNode> = {}): NcNode {
  const instances = ids.map((instanceId) => ({
    instanceId, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', vmType: SMALL, state: 'running' as const,
    hypervisorState: 'running', launchTime: 0, migrationState: 'none' as const,
  }));
  const used = { cores: ids.length, memoryMiB: 256 * ids.length, diskGiB: 5 * ids.length };
  return { host, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: CAP, used, instances, plans: [], incoming: [], ...over };
}

function plan(items: { instanceId: string; destination: string; state: MigrationPlan['items'][number]['state'] }[]): MigrationPlan {
  return {
    migrationId: MIG, source: H1, createdAt: 0, request: { kind: 'drain', destinations: [], allowHosts: true, reserveDestinations: false },
    limits: { perSource: 1, perDestination: 1, perCluster: 1 },
    timeouts: { prepareMs: 1, readyMs: 1, migratingBaseMs: 1, migratingPerGiBMs: 1, stallMs: 1 },
    cancelRequested: false, items: items.map((i) => ({ ...i, vmType: SMALL, attempts: 1, queuedAt: 0 })),
  };
}

const incoming = (instanceId: string): Incoming => ({
  migrationId: MIG, instanceId, source: H1, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', launchTime: 0, vmType: SMALL, state: 'ready', since: 0,
});

const ledger = (live: string[], states: [string, 'enabled' | 'disabled'][] = [], terminated: string[] = []): ChaosLedger => ({
  live: new Set(live), terminated: new Set(terminated), nodeState: new Map(states),
});

const kinds = (vs: string[]): string[] => vs.map((v) => v.split(':')[0] ?? v);

describe('checkAnytime', () => {
  it.each<[string, HostObservation[], ChaosLedger, string[]]>([
    ['a clean cloud', [{ host: H1, domains: [dom(A)], nc: nc(H1, [A]) }], ledger([A], [[H1, 'enabled']]), []],
    ['a live instance on no hypervisor', [{ host: H1, domains: [], nc: nc(H1, []) }], ledger([A]), ['1 lost']],
    ['an NC that is down still leaves the hypervisor as truth', [{ host: H1, domains: [dom(A)] }], ledger([A], [[H1, 'disabled']]), []],
    ['running on two hosts', [{ host: H1, domains: [dom(A)] }, { host: H2, domains: [dom(A)] }], ledger([A]), ['2 twice']],
    ['a paused incoming copy is allowed', [{ host: H1, domains: [dom(A)] }, { host: H2, domains: [dom(A, 'paused')] }], ledger([A]), []],
    ['the hypervisor over capacity', [{ host: H1, domains: [dom(A), dom(B), dom('i-0000000d')] }], ledger([]), ['3 capacity']],
    ['the NC over capacity', [{ host: H1, domains: [], nc: nc(H1, [A, B], { used: { cores: 3, memoryMiB: 0, diskGiB: 0 } }) }], ledger([]), ['3 capacity']],
    ['a plan reserving room the destination has not got', [
      { host: H1, domains: [dom('i-0000000e')], nc: nc(H1, ['i-0000000e'], { plans: [plan([{ instanceId: 'i-0000000e', destination: H2, state: 'queued' }])] }) },
      { host: H2, domains: [dom(A), dom(B)], nc: nc(H2, [A, B]) },
    ], ledger([]), ['3 capacity']],
    ['a reservation the destination already holds as incoming counts once', [
      { host: H1, domains: [dom(A)], nc: nc(H1, [A], { plans: [plan([{ instanceId: A, destination: H2, state: 'preparing' }])] }) },
      { host: H2, domains: [dom(A, 'paused'), dom(B)], nc: nc(H2, [B], { incoming: [incoming(A)], used: { cores: 2, memoryMiB: 512, diskGiB: 10 } }) },
    ], ledger([]), []],
    ['a final item reserves nothing', [
      { host: H1, domains: [], nc: nc(H1, [], { plans: [plan([{ instanceId: A, destination: H2, state: 'rolled-back' }])] }) },
      { host: H2, domains: [dom(A), dom(B)], nc: nc(H2, [A, B]) },
    ], ledger([]), []],
    ['an acknowledged disable the NC forgot', [{ host: H1, domains: [], nc: nc(H1, []) }], ledger([], [[H1, 'disabled']]), ['7 node state']],
  ])('%s', (_name, hosts, l, expected) => {
    expect(kinds(checkAnytime(hosts, l, CAP))).toEqual(expected);
    // The chaos test confirms a finding by a re-read in the reverse host order: it must read the same.
    expect(checkAnytime([...hosts].reverse(), l, CAP).sort()).toEqual(checkAnytime(hosts, l, CAP).sort());
  });
});

const cleanHosts = (): HostObservation[] => [{ host: H1, domains: [dom(A)], nc: nc(H1, [A]) }, { host: H2, domains: [], nc: nc(H2, []) }];
const row = (host: string, cores: number, nodeState = 'enabled'): any => ({ host, nodeState, used: { cores, memoryMiB: 256 * cores, diskGiB: 5 * cores } });
const cleanAdmin = (): AdminView => ({
  nodes: [row(H1, 1), row(H2, 0)],
  instances: [{ instanceId: A, nodeHost: H1, instanceState: { name: 'running' }, migrationState: 'none' }],
  migrations: [{ migrationId: MIG, state: 'completed' }],
  smallFree: 3,
});

describe('checkSettled', () => {
  it.each<[string, (h: HostObservation[], a: AdminView) => [HostObservation[], AdminView], ChaosLedger, string[]]>([
    ['a settled cloud', (h, a) => [h, a], ledger([A], [[H1, 'enabled']]), []],
    ['a migration still active', (h, a) => [h, { ...a, migrations: [{ migrationId: MIG, state: 'active' }] }], ledger([A]), ['6 liveness']],
    ['an incoming record left behind', (h, a) => [[h[0]!, { host: H2, domains: [], nc: nc(H2, [], { incoming: [incoming(B)], used: { cores: 1, memoryMiB: 256, diskGiB: 5 } }) }], a],
      ledger([A]), ['6 leftover', '6 reservation', '6 reservation']],
    ['a paused domain left behind', (h, a) => [[h[0]!, { host: H2, domains: [dom(B, 'paused')], nc: nc(H2, []) }], a], ledger([A]), ['6 leftover', '6 orphan']],
    ['the CC still counting a reservation', (h, a) => [h, { ...a, nodes: [row(H1, 1), row(H2, 1)] }], ledger([A]), ['6 reservation']],
    ['the matrix offering less than the nodes hold', (h, a) => [h, { ...a, smallFree: 2 }], ledger([A]), ['6 reservation']],
    ['a live instance not running', (h, a) => [[{ host: H1, domains: [dom(A, 'shutoff')], nc: nc(H1, [A]) }, h[1]!], a], ledger([A]), ['6 leftover', '1 settled']],
    ['the NC record still migrating', (h, a) => [[{ host: H1, domains: [dom(A)], nc: { ...nc(H1, [A]), instances: nc(H1, [A]).instances.map((i) => ({ ...i, migrationState: 'cleaning' as const })) } }, h[1]!], a],
      ledger([A]), ['1 settled']],
    ['DescribeInstances placing it elsewhere', (h, a) => [h, { ...a, instances: [{ ...a.instances[0], nodeHost: H2 }] }], ledger([A]), ['1 settled']],
    ['a terminated instance still there', (h, a) => [h, a], ledger([], [], [A]), ['1 terminated']],
    ['DescribeNodes not showing an acknowledged disable', (h, a) => [h, a], ledger([A], [[H2, 'disabled']]), ['7 node state']],
  ])('%s', (_name, make, l, expected) => {
    const [hosts, admin] = make(cleanHosts(), cleanAdmin());
    expect(kinds(checkSettled(hosts, admin, l, CAP, SMALL)).sort()).toEqual([...expected].sort());
  });
});
