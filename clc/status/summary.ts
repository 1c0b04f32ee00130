/**
 * The status page's one JSON document (GET /status/api/summary), built from what the admin
 * describes already gather: the CCs' nodes (DescribeNodes), their resource matrices
 * (DescribeAvailabilityZones verbose), the migration plans (DescribeMigrations), host HA's records
 * (DescribeHostHA) and the last events. Pure: the gathered facts and `now` in, the document out.
 */
import type { MatrixRow } from '../../shared/model/resourceMatrix.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';
import type { MigrationView } from '../core/migrationView.js';
import { nodeServiceState, type ServiceState } from '../core/services.js';
import type { HaState } from '../ha/hostHaState.js';

/** One host's HA facts, as host HA's DescribeHostHA view holds them. */
export interface HostHaFacts {
  readonly host: string;
  readonly haEnabled: boolean;
  readonly state: HaState;
  readonly since: number;
  readonly needsOperator: boolean;
  readonly fencedBy: 'agent' | 'operator' | null;
  readonly fenceAttempts: number;
  readonly reason: string;
}

/** One event of the page's "last events" (HA's event log today; issue 20's event stream later). */
export interface StatusEvent {
  readonly at: number;
  readonly source: string;
  readonly level: 'info' | 'warn' | 'critical';
  readonly message: string;
}

export interface SummaryFacts {
  readonly now: number;
  /** Every partition the CLC knows, in its order. */
  readonly partitions: readonly string[];
  /** Partitions whose CC did not answer, and why. */
  readonly unavailable: ReadonlyMap<string, string>;
  readonly nodes: readonly CcNode[];
  /** Per answering partition, its resource matrix (free and total of each VM type). */
  readonly matrices: ReadonlyMap<string, readonly MatrixRow[]>;
  readonly migrations: readonly MigrationView[];
  /** Undefined when the CLC runs without host HA. */
  readonly ha: readonly HostHaFacts[] | undefined;
  /** Newest first. */
  readonly events: readonly StatusEvent[];
}

export interface Gauge { readonly used: number; readonly total: number }

export interface ClusterSummary {
  readonly name: string;
  readonly state: 'ENABLED' | 'NOTREADY';
  readonly detail: string;
  readonly nodes: number;
  readonly enabledNodes: number;
  readonly cores: Gauge;
  readonly memoryMiB: Gauge;
  /** Per VM type: how many more fit, of how many on an empty cluster. */
  readonly vmTypes: readonly { readonly name: string; readonly available: number; readonly max: number }[];
}

export interface NodeSummary {
  readonly host: string;
  readonly partition: string;
  /** Eucalyptus's service state: ENABLED, DISABLED (maintenance or quarantine) or NOTREADY. */
  readonly state: ServiceState;
  readonly details: readonly string[];
  readonly stale: boolean;
  readonly quarantine: { readonly since: number; readonly reason: string } | null;
  readonly ha: { readonly enabled: boolean; readonly state: HaState; readonly since: number; readonly reason: string } | null;
  /** Fencing as host HA sees it: none, under way, waiting for an operator, or done (by whom). */
  readonly fencing: 'none' | 'fencing' | 'needs-operator' | 'fenced-by-agent' | 'fenced-by-operator';
  readonly cores: Gauge;
  readonly memoryMiB: Gauge;
  readonly instances: number;
  readonly migrating: number;
}

export interface MigrationItemSummary {
  readonly instanceId: string;
  readonly destination: string;
  readonly state: string;
  /** 0-100, whole numbers; null before the NC reported any progress. */
  readonly percent: number | null;
  readonly bytesTransferred: number;
  readonly bytesTotal: number;
  readonly iteration: number;
  readonly error: string | null;
}

export interface MigrationSummary {
  readonly migrationId: string;
  readonly partition: string;
  readonly source: string;
  readonly kind: string;
  readonly status: string;
  readonly createdAt: number;
  readonly done: number;
  readonly items: readonly MigrationItemSummary[];
}

export interface StatusSummary {
  readonly generatedAt: number;
  readonly clusters: readonly ClusterSummary[];
  readonly nodes: readonly NodeSummary[];
  /** Active migrations, oldest first. */
  readonly inFlight: readonly MigrationSummary[];
  /** The last finished migrations, newest first. */
  readonly finished: readonly MigrationSummary[];
  readonly events: readonly StatusEvent[];
  readonly haEnabled: boolean;
}

/** How many finished migrations the page lists. */
export const FINISHED_SHOWN = 5;

function fencingOf(ha: HostHaFacts | undefined): NodeSummary['fencing'] {
  if (!ha) return 'none';
  if (ha.state === 'FENCING') return ha.needsOperator ? 'needs-operator' : 'fencing';
  if (ha.state === 'FENCED') return ha.fencedBy === 'operator' ? 'fenced-by-operator' : 'fenced-by-agent';
  return 'none';
}

/**
 * How far a migration is, as QEMU's job info reads: memory sent over memory sent plus what is left
 * to send (the next pre-copy round's dirtied pages), a whole percentage; null before the first report.
 */
export function percentOf(p: { readonly bytesTransferred: number; readonly bytesRemaining: number } | undefined, state: string): number | null {
  if (state === 'completed') return 100;
  if (!p) return null;
  const all = p.bytesTransferred + p.bytesRemaining;
  return all <= 0 ? 0 : Math.min(100, Math.floor((p.bytesTransferred / all) * 100));
}

function migrationSummary(m: MigrationView): MigrationSummary {
  const items = m.items.map((i): MigrationItemSummary => ({
    instanceId: i.instanceId, destination: i.destination, state: i.state, percent: percentOf(i.progress, i.state),
    bytesTransferred: i.progress?.bytesTransferred ?? i.stats?.bytesTransferred ?? 0, bytesTotal: i.progress?.bytesTotal ?? 0,
    iteration: i.progress?.iteration ?? i.stats?.iterations ?? 0, error: i.error ?? null,
  }));
  return {
    migrationId: m.migrationId, partition: m.partition, source: m.source, kind: m.kind, status: m.status, createdAt: m.createdAt,
    done: m.items.filter((i) => i.state === 'completed').length, items,
  };
}

function nodeSummary(n: CcNode, ha: HostHaFacts | undefined): NodeSummary {
  const s = nodeServiceState(n);
  return {
    host: n.host, partition: n.partition, state: s.state, details: s.details, stale: n.stale === true,
    quarantine: n.quarantine ? { since: n.quarantine.since, reason: n.quarantine.reason } : null,
    ha: ha ? { enabled: ha.haEnabled, state: ha.state, since: ha.since, reason: ha.reason } : null,
    fencing: fencingOf(ha),
    cores: { used: n.used.cores, total: n.capacity.cores },
    memoryMiB: { used: n.used.memoryMiB, total: n.capacity.memoryMiB },
    instances: n.instances.length,
    migrating: n.instances.filter((i) => i.migrationState !== 'none').length,
  };
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

function clusterSummary(name: string, facts: SummaryFacts, nodes: readonly NodeSummary[]): ClusterSummary {
  const failure = facts.unavailable.get(name);
  const mine = nodes.filter((n) => n.partition === name);
  return {
    name, state: failure === undefined ? 'ENABLED' : 'NOTREADY', detail: failure ?? '',
    nodes: mine.length, enabledNodes: mine.filter((n) => n.state === 'ENABLED').length,
    cores: { used: sum(mine.map((n) => n.cores.used)), total: sum(mine.map((n) => n.cores.total)) },
    memoryMiB: { used: sum(mine.map((n) => n.memoryMiB.used)), total: sum(mine.map((n) => n.memoryMiB.total)) },
    vmTypes: (facts.matrices.get(name) ?? []).map((r) => ({ name: r.vmType, available: r.available, max: r.max })),
  };
}

const byHost = (a: { host: string; partition: string }, b: { host: string; partition: string }): number =>
  a.partition.localeCompare(b.partition) || a.host.localeCompare(b.host, undefined, { numeric: true });

export function buildSummary(facts: SummaryFacts): StatusSummary {
  const ha = new Map((facts.ha ?? []).map((h) => [h.host, h]));
  const nodes = [...facts.nodes].sort(byHost).map((n) => nodeSummary(n, ha.get(n.host)));
  const active = facts.migrations.filter((m) => m.status === 'active');
  const finished = facts.migrations.filter((m) => m.status !== 'active')
    .sort((a, b) => b.createdAt - a.createdAt || b.migrationId.localeCompare(a.migrationId)).slice(0, FINISHED_SHOWN);
  return {
    generatedAt: facts.now,
    clusters: facts.partitions.map((p) => clusterSummary(p, facts, nodes)),
    nodes,
    inFlight: [...active].sort((a, b) => a.createdAt - b.createdAt || a.migrationId.localeCompare(b.migrationId)).map(migrationSummary),
    finished: finished.map(migrationSummary),
    events: facts.events,
    haEnabled: facts.ha !== undefined,
  };
}
