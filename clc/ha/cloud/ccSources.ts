/**
 * Host HA's health and activity sources and host facts, from the CLC's CC client (issue 6): the CLC
 * never talks to an NC. Health is the CC's fresh view of the node (ccDescribeNodes refreshes stale
 * nodes within a bounded time); activity is ccCheckHostActivity, which has a healthy neighbour NC of
 * the same cluster look at the suspect's writes on shared storage. Every call is bounded by the
 * effect's deadline on the injected clock.
 */
import type { Clock } from '../../../shared/clock.js';
import { NextCall } from '../../../shared/nextCall.js';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';
import type { Clusters } from '../../clusters/clusters.js';
import type { ActivitySource, HealthSource, HostFacts } from '../composedProvider.js';
import type { HaHostRef } from '../haProvider.js';
import { HaErrors } from '../errors.js';
import { FENCE_STATES, type HaState } from '../hostHaState.js';

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

/**
 * A partition's nodes as its CC sees them now (`cached`: as its view holds them, no NC asked;
 * `maxAgeMs`: the CC asks again only the nodes it has not heard from within that long, default 1 s).
 */
export async function nodesOf(clusters: Clusters, partition: string, cached = false, maxAgeMs?: number): Promise<readonly CcNode[]> {
  return (await clusters.call(partition, 'ccDescribeNodes', cached ? { cached } : maxAgeMs !== undefined ? { maxAgeMs } : {})).nodes;
}

/** Reachable and healthy: the NC answered the CC's last (fresh) poll and its hypervisor is connected. */
export const isUp = (n: CcNode): boolean => n.reachable && n.healthy;

const indexes = new WeakMap<readonly CcNode[], { readonly byHost: ReadonlyMap<string, CcNode>; readonly up: number }>();

/** The nodes of one answer by host, and how many are up: built once per answer, not searched per host. */
function indexOf(nodes: readonly CcNode[]): { readonly byHost: ReadonlyMap<string, CcNode>; readonly up: number } {
  let ix = indexes.get(nodes);
  if (!ix) {
    ix = { byHost: new Map(nodes.map((n) => [n.host, n])), up: nodes.filter(isUp).length };
    indexes.set(nodes, ix);
  }
  return ix;
}

/**
 * Fresh nodes of a partition, shared: a caller joins the describe sent next, never one already in
 * flight (sent before it asked, so its answer may predate the question). A health pass of 10,000
 * hosts then asks the CC a few times, not 10,000 times for 10,000 nodes each. `maxAgeOf(partition)`:
 * how old the CC's data of a node may be (its nodesOf maxAgeMs); host HA passes the partition's
 * health-check interval: a check looks at data from within the last interval, which the CC's own
 * polls keep (at 2,000 hosts, asking every NC again for each describe kept the CC re-polling every
 * node all the time and a health pass took 38 s).
 */
export function freshNodes(clusters: Clusters, maxAgeOf: (partition: string) => number | undefined = () => undefined): (partition: string) => Promise<readonly CcNode[]> {
  const byPartition = new Map<string, NextCall<readonly CcNode[]>>();
  return (partition) => {
    let calls = byPartition.get(partition);
    if (!calls) {
      calls = new NextCall(() => nodesOf(clusters, partition, false, maxAgeOf(partition)));
      byPartition.set(partition, calls);
    }
    return calls.call();
  };
}

export function ccHealthSource(clusters: Clusters, clock: Clock, nodes: (partition: string) => Promise<readonly CcNode[]> = freshNodes(clusters)): HealthSource {
  return {
    async isHealthy(ref, deadline) {
      const answer = await withDeadline(clock, deadline, `the CC of ${ref.partition}`, nodes(ref.partition));
      const n = indexOf(answer).byHost.get(ref.host);
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
 * One ccDescribeNodes per partition shared by every caller within `maxAgeMs` (the facts of all hosts
 * in one eligibility round ask once per partition, not twice per host). Eligibility needs the nodes'
 * maintenance states and which neighbours are up as the CC's view holds them (its polls and the NCs'
 * change notices keep it current): the CC answers from its view and polls no NC for it (issue 19).
 * Health checks, which must not trust an old answer, ask fresh (nodesOf).
 */
export function sharedNodes(clusters: Clusters, clock: Clock, maxAgeMs: number): (partition: string) => Promise<readonly CcNode[]> {
  const cache = new Map<string, { at: number; nodes: Promise<readonly CcNode[]> }>();
  return (partition) => {
    const hit = cache.get(partition);
    if (hit && clock.now() - hit.at < maxAgeMs) return hit.nodes;
    const nodes = nodesOf(clusters, partition, true);
    cache.set(partition, { at: clock.now(), nodes });
    nodes.catch(() => cache.delete(partition));
    return nodes;
  };
}

export function ccHostFacts(
  clusters: Clusters, haStateOf: (host: string) => HaState | undefined, nodes: (partition: string) => Promise<readonly CcNode[]> = (p) => nodesOf(clusters, p),
): HostFacts {
  return {
    async inMaintenance(ref: HaHostRef) {
      const n = indexOf(await nodes(ref.partition)).byHost.get(ref.host);
      const s = haStateOf(ref.host);
      // A quarantined node (issue 18) is the administrator's, whatever else its last report says.
      if (n?.quarantine !== undefined) return true;
      return n?.nodeState === 'disabled' && !(s !== undefined && FENCE_STATES.has(s));
    },
    async neighbours(ref: HaHostRef) {
      const ix = indexOf(await nodes(ref.partition));
      const self = ix.byHost.get(ref.host);
      return ix.up - (self !== undefined && isUp(self) ? 1 : 0);
    },
  };
}
