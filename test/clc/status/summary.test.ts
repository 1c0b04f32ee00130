/** The status page's summary builder (pure): facts in, the page's JSON out, table by table. */
import { describe, expect, it } from 'vitest';
import type { MigrationItemView, MigrationView } from '../../../clc/core/migrationView.js';
import type { HaState } from '../../../clc/ha/hostHaState.js';
import { buildSummary, FINISHED_SHOWN, percentOf, type HostHaFacts, type SummaryFacts } from '../../../clc/status/summary.js';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

function node(host: string, over: Partial<CcNode> = {}): CcNode {
  return {
    host, partition: 'cluster01', nodeState: 'enabled', reachable: true, healthy: true, lastSeen: NOW - 1000,
    capacity: { cores: 8, memoryMiB: 8192, diskGiB: 100 }, used: { cores: 2, memoryMiB: 512, diskGiB: 10 }, instances: [], ...over,
  };
}

function ha(host: string, state: HaState, over: Partial<HostHaFacts> = {}): HostHaFacts {
  return { host, haEnabled: true, state, since: NOW - 5000, needsOperator: false, fencedBy: null, fenceAttempts: 0, reason: '', ...over };
}

function item(instanceId: string, over: Partial<MigrationItemView> = {}): MigrationItemView {
  return {
    instanceId, instanceType: 'm1.small', destination: '127.0.78.2', state: 'migrating', attempts: 1, error: undefined,
    queuedAt: NOW - 3000, startedAt: NOW - 2000, endedAt: undefined, elapsedMs: 2000, progress: undefined, stats: undefined, ...over,
  };
}

function migration(id: string, status: MigrationView['status'], createdAt: number, items: MigrationItemView[] = [item('i-00000001')]): MigrationView {
  return {
    migrationId: id, partition: 'cluster01', source: '127.0.78.1', kind: 'drain', destinations: [], allowHosts: false, reserveDestinations: false,
    createdAt, cancelRequested: false, sourceReachable: true, status, items,
  };
}

function facts(over: Partial<SummaryFacts> = {}): SummaryFacts {
  return { now: NOW, partitions: ['cluster01'], unavailable: new Map(), nodes: [], matrices: new Map(), migrations: [], ha: [], events: [], ...over };
}

describe('status summary: nodes', () => {
  it.each([
    ['enabled', node('127.0.78.1'), 'ENABLED'],
    ['in maintenance', node('127.0.78.1', { nodeState: 'disabled' }), 'DISABLED'],
    ['quarantined', node('127.0.78.1', { nodeState: 'disabled', quarantine: { since: NOW - 60_000, reason: 'bad DIMM' } }), 'DISABLED'],
    ['unreachable', node('127.0.78.1', { reachable: false }), 'NOTREADY'],
    ['without its hypervisor', node('127.0.78.1', { healthy: false }), 'NOTREADY'],
    ['never heard from', node('127.0.78.1', { nodeState: 'unknown' }), 'NOTREADY'],
  ])('a node %s is %s', (_what, n, state) => {
    const [s] = buildSummary(facts({ nodes: [n] })).nodes;
    expect(s?.state).toBe(state);
  });

  it('carries quarantine, capacity and the migrating count', () => {
    const n = node('127.0.78.1', {
      quarantine: { since: NOW - 60_000, reason: 'bad DIMM' }, nodeState: 'disabled',
      instances: [
        { instanceId: 'i-00000001', state: 'running', migrationState: 'migrating' } as CcNode['instances'][number],
        { instanceId: 'i-00000002', state: 'running', migrationState: 'none' } as CcNode['instances'][number],
      ],
    });
    const [s] = buildSummary(facts({ nodes: [n] })).nodes;
    expect(s).toMatchObject({ quarantine: { since: NOW - 60_000, reason: 'bad DIMM' }, cores: { used: 2, total: 8 }, memoryMiB: { used: 512, total: 8192 }, instances: 2, migrating: 1 });
    expect(s?.details.join(' ')).toContain('bad DIMM');
  });

  it.each([
    ['AVAILABLE', {}, 'none'],
    ['FENCING', {}, 'fencing'],
    ['FENCING', { needsOperator: true }, 'needs-operator'],
    ['FENCED', { fencedBy: 'agent' as const }, 'fenced-by-agent'],
    ['FENCED', { fencedBy: 'operator' as const }, 'fenced-by-operator'],
    ['SUSPECT', {}, 'none'],
  ] as const)('HA %s %j reads as fencing %s', (state, over, fencing) => {
    const [s] = buildSummary(facts({ nodes: [node('127.0.78.1')], ha: [ha('127.0.78.1', state, over)] })).nodes;
    expect(s?.fencing).toBe(fencing);
    expect(s?.ha?.state).toBe(state);
  });

  it('a node HA does not know has no HA state; without HA the page says so', () => {
    expect(buildSummary(facts({ nodes: [node('127.0.78.1')] })).nodes[0]?.ha).toBeNull();
    expect(buildSummary(facts({ ha: undefined })).haEnabled).toBe(false);
    expect(buildSummary(facts()).haEnabled).toBe(true);
  });

  it('lists nodes by partition, then host in numeric order', () => {
    const nodes = ['127.0.78.10', '127.0.78.9', '127.0.78.2'].map((h) => node(h));
    const other = node('127.0.78.1', { partition: 'cluster02' });
    expect(buildSummary(facts({ partitions: ['cluster01', 'cluster02'], nodes: [other, ...nodes] })).nodes.map((n) => n.host))
      .toEqual(['127.0.78.2', '127.0.78.9', '127.0.78.10', '127.0.78.1']);
  });
});

describe('status summary: clusters', () => {
  it('adds up its nodes, counts the enabled ones, shows its matrix, and names a CC that did not answer', () => {
    const s = buildSummary(facts({
      partitions: ['cluster01', 'cluster02'],
      unavailable: new Map([['cluster02', 'connection refused']]),
      nodes: [node('127.0.78.1'), node('127.0.78.2', { nodeState: 'disabled', used: { cores: 4, memoryMiB: 1024, diskGiB: 0 } })],
      matrices: new Map([['cluster01', [{ vmType: 'm1.small', max: 32, available: 26, cores: 1, memoryMiB: 256, diskGiB: 5 }]]]),
    }));
    expect(s.clusters).toEqual([
      { name: 'cluster01', state: 'ENABLED', detail: '', nodes: 2, enabledNodes: 1, cores: { used: 6, total: 16 }, memoryMiB: { used: 1536, total: 16384 }, vmTypes: [{ name: 'm1.small', available: 26, max: 32 }] },
      { name: 'cluster02', state: 'NOTREADY', detail: 'connection refused', nodes: 0, enabledNodes: 0, cores: { used: 0, total: 0 }, memoryMiB: { used: 0, total: 0 }, vmTypes: [] },
    ]);
  });
});

describe('status summary: migrations', () => {
  it.each([
    ['no report yet', undefined, 'migrating', null],
    ['first round sent, half as much dirtied', { bytesTotal: 100, bytesTransferred: 100, bytesRemaining: 50, iteration: 1 }, 'migrating', 66],
    ['second round sent', { bytesTotal: 100, bytesTransferred: 150, bytesRemaining: 25, iteration: 2 }, 'migrating', 85],
    ['nothing to send', { bytesTotal: 0, bytesTransferred: 0, bytesRemaining: 0, iteration: 0 }, 'preparing', 0],
    ['completed', { bytesTotal: 100, bytesTransferred: 170, bytesRemaining: 5, iteration: 4 }, 'completed', 100],
    ['completed without a report', undefined, 'completed', 100],
  ] as const)('progress with %s is %s', (_what, progress, state, percent) => {
    expect(percentOf(progress, state)).toBe(percent);
  });

  it('grows with each pre-copy round of a converging guest', () => {
    let sent = 0;
    let round = 1024;
    const seen: number[] = [];
    for (let i = 1; i <= 6; i++) {
      sent += round;
      round /= 2;
      seen.push(percentOf({ bytesTransferred: sent, bytesRemaining: round }, 'migrating') ?? -1);
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]!);
  });

  it('splits active from finished: active oldest first, the last finished newest first and bounded', () => {
    const finished = Array.from({ length: FINISHED_SHOWN + 2 }, (_, k) => migration(`mig-0000000${k}`, k % 2 === 0 ? 'completed' : 'incomplete', NOW - 100_000 + k));
    const s = buildSummary(facts({ migrations: [migration('mig-000000b1', 'active', NOW - 10), ...finished, migration('mig-000000a1', 'active', NOW - 20)] }));
    expect(s.inFlight.map((m) => m.migrationId)).toEqual(['mig-000000a1', 'mig-000000b1']);
    expect(s.finished).toHaveLength(FINISHED_SHOWN);
    expect(s.finished[0]?.migrationId).toBe(`mig-0000000${FINISHED_SHOWN + 1}`);
  });

  it('shows each item with its progress, bytes and error, and counts the done ones', () => {
    const m = migration('mig-00000001', 'active', NOW - 10, [
      item('i-00000001', { state: 'completed', stats: { elapsedMs: 900, downtimeMs: 40, bytesTransferred: 300, iterations: 3 } }),
      item('i-00000002', { progress: { bytesTotal: 200, bytesTransferred: 200, bytesRemaining: 200, iteration: 1 } }),
      item('i-00000003', { state: 'failed', destination: '', error: 'no destination' }),
    ]);
    const [s] = buildSummary(facts({ migrations: [m] })).inFlight;
    expect(s?.done).toBe(1);
    expect(s?.items).toEqual([
      { instanceId: 'i-00000001', destination: '127.0.78.2', state: 'completed', percent: 100, bytesTransferred: 300, bytesTotal: 0, iteration: 3, error: null },
      { instanceId: 'i-00000002', destination: '127.0.78.2', state: 'migrating', percent: 50, bytesTransferred: 200, bytesTotal: 200, iteration: 1, error: null },
      { instanceId: 'i-00000003', destination: '', state: 'failed', percent: null, bytesTransferred: 0, bytesTotal: 0, iteration: 0, error: 'no destination' },
    ]);
  });

  it('passes the events through as given', () => {
    const events = [{ at: NOW, source: '127.0.78.1', level: 'warn' as const, message: 'health check failed' }];
    expect(buildSummary(facts({ events })).events).toEqual(events);
  });
});
