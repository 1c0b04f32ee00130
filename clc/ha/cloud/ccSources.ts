/**
 * Host HA's health and activity sources and host facts, from the CLC's CC client (issue 6): the CLC
 * never talks to an NC. Health is the CC's fresh view of the node (ccDescribeNodeHealth, read through
 * nodeHealthReader.ts: the CC refreshes stale nodes within a bounded time, and answers `unchanged`
 * while no node's health changed); activity is ccCheckHostActivity, which has a healthy neighbour NC
 * of the same cluster look at the suspect's writes on shared storage. Every call is bounded by the
 * effect's deadline on the injected clock.
 */
import type { Clock } from '../../../shared/clock.js';
import { NextCall } from '../../../shared/nextCall.js';
import type { CcNodeHealth } from '../../../shared/protocol/ccProtocol.js';
import type { Clusters } from '../../clusters/clusters.js';
import type { ActivitySource, HealthSource, HostFacts } from '../composedProvider.js';
import type { HaHostRef } from '../haProvider.js';
import { HaErrors } from '../errors.js';
import { FENCE_STATES, type HaState } from '../hostHaState.js';
import { NodeHealthReader, type NodeHealthAnswer } from './nodeHealthReader.js';

/** Rejects with HA's SourceTimedOut once `deadline` (epoch ms on `clock`) passes; the work is left to settle on its own. */
export function withDeadline<T>(clock: Clock, deadline: number, what: string, work: Promise<T>): Promise<T> {
  const left = deadline - clock.now();
  if (left <= 0) {
    // The work has started and is left to settle: its failure must not go unobserved (an unhandled
    // rejection stops the CLC; a power-status probe queued past its deadline behind 10,000 hosts did).
    work.catch(() => undefined);
    return Promise.reject(HaErrors.make('SourceTimedOut', { detail: `${what}: no time left before the deadline` }));
  }
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(left, () => reject(HaErrors.make('SourceTimedOut', { detail: `${what} did not answer within ${left} ms` })));
    work.then(
      (v) => { timer.cancel(); resolve(v); },
      (e: unknown) => { timer.cancel(); reject(e instanceof Error ? e : HaErrors.make('SourceTimedOut', { detail: `${what} failed: ${String(e)}` })); },
    );
  });
}

/** Reachable and healthy: the NC answered the CC's last (fresh) poll and its hypervisor is connected. */
export const isUp = (n: Pick<CcNodeHealth, 'reachable' | 'healthy'>): boolean => n.reachable && n.healthy;

type NodeIndex = { readonly byHost: ReadonlyMap<string, CcNodeHealth>; readonly up: number };
const indexes = new WeakMap<readonly CcNodeHealth[], NodeIndex>();

/**
 * The nodes of one answer by host, and how many are up: built once per answer, not searched per host.
 * An `unchanged` answer hands back the array held (nodeHealthReader.ts), so its index is reused too.
 */
function indexOf(nodes: readonly CcNodeHealth[]): NodeIndex {
  let ix = indexes.get(nodes);
  if (!ix) {
    ix = { byHost: new Map(nodes.map((n) => [n.host, n])), up: nodes.filter(isUp).length };
    indexes.set(nodes, ix);
  }
  return ix;
}

/** A partition's nodes as host HA reads them (freshNodes, sharedNodes). */
export type PartitionNodes = (partition: string) => Promise<NodeHealthAnswer>;

/**
 * Fresh nodes of a partition, shared: a caller joins the describe sent next, never one already in
 * flight (sent before it asked, so its answer may predate the question). A health pass of 10,000
 * hosts then asks the CC a few times, not 10,000 times for 10,000 nodes each. `maxAgeOf(partition)`:
 * how old the CC's data of a node may be (the read's maxAgeMs); host HA passes the partition's
 * health-check interval: a check looks at data from within the last interval, which the CC's own
 * polls keep (at 2,000 hosts, asking every NC again for each describe kept the CC re-polling every
 * node all the time and a health pass took 38 s).
 */
export function freshNodes(reader: NodeHealthReader, maxAgeOf: (partition: string) => number | undefined = () => undefined): PartitionNodes {
  const byPartition = new Map<string, NextCall<NodeHealthAnswer>>();
  return (partition) => {
    let calls = byPartition.get(partition);
    if (!calls) {
      calls = new NextCall(() => {
        const maxAgeMs = maxAgeOf(partition);
        return reader.read(partition, maxAgeMs !== undefined ? { maxAgeMs } : {});
      });
      byPartition.set(partition, calls);
    }
    return calls.call();
  };
}

export function ccHealthSource(clusters: Clusters, clock: Clock, nodes: PartitionNodes = freshNodes(new NodeHealthReader(clusters, clock))): HealthSource {
  return {
    async isHealthy(ref, deadline) {
      const answer = await withDeadline(clock, deadline, `the CC of ${ref.partition}`, nodes(ref.partition));
      const n = indexOf(answer.hosts).byHost.get(ref.host);
      // Issue 21: a standby CC replica answered (its leader did not). Its word that a node answers is
      // a fresh sign of life; its word that one does not may be its own older look, never fresh health.
      if (answer.leading === false && !(n !== undefined && isUp(n))) {
        throw HaErrors.make('SourceInconclusive', { detail: `a standby CC replica of ${ref.partition} answered, not its leader: its word that ${ref.host} is down may be older than the leader's` });
      }
      if (!n) return { healthy: false, detail: `the CC of ${ref.partition} does not know ${ref.host}` };
      if (!n.reachable) return { healthy: false, detail: `the NC of ${ref.host} did not answer its CC` };
      if (!n.healthy) return { healthy: false, detail: `the NC of ${ref.host} has no connection to its hypervisor` };
      return { healthy: true, detail: `the NC of ${ref.host} answers and its hypervisor is connected` };
    },
  };
}

export function ccActivitySource(clusters: Clusters, clock: Clock): ActivitySource {
  return {
    async hasActivity(ref, since, deadline) {
      // The CC gets a little less than the whole budget, so its own verdict arrives before ours expires.
      const budget = Math.max(1, Math.floor((deadline - clock.now()) * 0.9));
      const r = await withDeadline(clock, deadline, `the CC of ${ref.partition}`, clusters.call(ref.partition, 'ccCheckHostActivity', { host: ref.host, since, timeoutMs: budget }));
      return { outcome: r.outcome, detail: r.detail };
    },
  };
}


/**
 * One cached read per partition shared by every caller within `maxAgeMs` (the facts of all hosts in
 * one eligibility round ask once per partition, not twice per host). Eligibility needs the nodes'
 * maintenance states and which neighbours are up as the CC's view holds them (its polls and the NCs'
 * change notices keep it current): the CC answers from its view and polls no NC for it (issue 19).
 * Health checks, which must not trust an old answer, ask fresh (freshNodes).
 */
export function sharedNodes(reader: NodeHealthReader, clock: Clock, maxAgeMs: number): PartitionNodes {
  const cache = new Map<string, { at: number; nodes: Promise<NodeHealthAnswer> }>();
  return (partition) => {
    const hit = cache.get(partition);
    if (hit && clock.now() - hit.at < maxAgeMs) return hit.nodes;
    const nodes = reader.read(partition, { cached: true });
    cache.set(partition, { at: clock.now(), nodes });
    nodes.catch(() => cache.delete(partition));
    return nodes;
  };
}

export function ccHostFacts(
  clusters: Clusters, clock: Clock, haStateOf: (host: string) => HaState | undefined, nodes: PartitionNodes = freshNodes(new NodeHealthReader(clusters, clock)),
): HostFacts {
  return {
    async inMaintenance(ref: HaHostRef) {
      const n = indexOf((await nodes(ref.partition)).hosts).byHost.get(ref.host);
      const s = haStateOf(ref.host);
      // A quarantined node (issue 18) is the administrator's, whatever else its last report says.
      if (n?.quarantined === true) return true;
      return n?.nodeState === 'disabled' && !(s !== undefined && FENCE_STATES.has(s));
    },
    async neighbours(ref: HaHostRef) {
      const ix = indexOf((await nodes(ref.partition)).hosts);
      const self = ix.byHost.get(ref.host);
      return ix.up - (self !== undefined && isUp(self) ? 1 : 0);
    },
  };
}
