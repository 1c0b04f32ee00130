/**
 * Where the status page's facts come from: the same reads the admin describes make (the CCs'
 * ccDescribeNodes and ccDescribeResources as DescribeNodes and DescribeAvailabilityZones verbose
 * ask them, DescribeMigrations' lookup, host HA's DescribeHostHA view), never a copy of them.
 * The last events come through `StatusEventSource`, HA's event log for now, so the general event
 * stream (issue 20) can replace it in one place.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import type { MatrixRow } from '../../shared/model/resourceMatrix.js';
import type { Store } from '../../shared/store/store.js';
import { describeMigrations } from '../api/actions/migrationLookup.js';
import { partitionNames, type Clusters } from '../clusters/clusters.js';
import { askPartitions } from '../clusters/fanOut.js';
import type { HaControl } from '../ha/haControl.js';
import type { ClcState } from '../state/clcStore.js';
import { buildSummary, type HostHaFacts, type StatusEvent, type StatusSummary } from './summary.js';

/** How many events the page shows. */
export const EVENTS_SHOWN = 20;

/** The page's "last events", newest first. */
export type StatusEventSource = (limit: number) => readonly StatusEvent[];

/** Host HA's event log as the page's events (until DescribeEvents' stream replaces it). */
export function haEventSource(ha: HaControl): StatusEventSource {
  return (limit) => ha.events({ limit }).reverse().map((e) => ({ at: e.at, source: e.host, level: e.level, message: e.message }));
}

export interface StatusSourcesOptions {
  readonly clusters: Clusters;
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly ha?: HaControl;
  readonly events?: StatusEventSource;
}

function haFacts(ha: HaControl): HostHaFacts[] {
  return ha.describeHosts({ events: 0 }).map((v) => ({
    host: v.host, haEnabled: v.haEnabled, state: v.record.state, since: v.record.since, needsOperator: v.record.needsOperator,
    fencedBy: v.record.fencedBy, fenceAttempts: v.record.fenceAttempts, reason: v.record.reason,
  }));
}

/** Asks every partition once (nodes, resources and migrations together) and builds the summary. */
export async function gatherSummary(opts: StatusSourcesOptions): Promise<StatusSummary> {
  const partitions = partitionNames(opts.clusters);
  const [nodes, resources, migrations] = await Promise.all([
    askPartitions(opts.clusters, partitions, 'ccDescribeNodes', {}, opts.logger),
    askPartitions(opts.clusters, partitions, 'ccDescribeResources', { vmTypes: opts.store.read().vmTypes }, opts.logger),
    describeMigrations(opts, partitions),
  ]);
  const unavailable = new Map([...nodes.unavailable].map(([p, e]) => [p, e.message]));
  const matrices = new Map<string, readonly MatrixRow[]>([...resources.answers].map(([p, r]) => [p, r.matrix]));
  const events = opts.events ?? (opts.ha ? haEventSource(opts.ha) : () => []);
  return buildSummary({
    now: opts.clock.now(), partitions, unavailable, nodes: [...nodes.answers.values()].flatMap((r) => r.nodes), matrices,
    migrations: migrations.views, ha: opts.ha ? haFacts(opts.ha) : undefined, events: events(EVENTS_SHOWN),
  });
}
