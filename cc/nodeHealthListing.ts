/**
 * Host HA's compact, versioned read of the nodes (issue 19, ccDescribeNodeHealth): per node only the
 * tuple host HA uses (ccNodeHealthSchema), and a version that moves whenever any node's tuple does,
 * so a steady cluster answers `unchanged` instead of 10,000 nodes with their instances. A version is
 * this process's random boot id, the kind of read and a counter (as ListingVersions): a CC restart, or
 * the other kind of read, never repeats a version an earlier answer carried.
 *
 * Cost: each call walks the view once (O(n) field comparisons, no allocation while nothing changed);
 * the view is refreshed per read anyway, and the walk is a small part of that (bench supervision/
 * node-health: measured against ccDescribeNodes' encode and validation of every node).
 */
import { randomBytes } from 'node:crypto';
import type { CcNodeHealth } from '../shared/protocol/ccProtocol.js';
import type { ClusterView } from './view.js';

/** `cached`: as the view holds it (ccDescribeNodes' `cached`); `fresh`: after readView's refresh. */
export type HealthReadKind = 'cached' | 'fresh';

const KIND_TAG: Readonly<Record<HealthReadKind, string>> = { cached: 'c', fresh: 'f' };

/** One node's tuple as the view holds it, with `stale` as the read decided. */
function tupleOf(node: ClusterView['entries'][number]['node'], stale: boolean): CcNodeHealth {
  return { host: node.host, nodeState: node.nodeState, reachable: node.reachable, healthy: node.healthy, stale, quarantined: node.quarantine !== undefined };
}

/** Whether `held` is exactly the tuples of `view` (same hosts in the same order, same fields). */
function sameAsView(held: readonly CcNodeHealth[], view: ClusterView, stale: ReadonlySet<string>): boolean {
  if (held.length !== view.entries.length) return false;
  for (let i = 0; i < held.length; i++) {
    const h = held[i] as CcNodeHealth;
    const n = (view.entries[i] as ClusterView['entries'][number]).node;
    if (h.host !== n.host || h.nodeState !== n.nodeState || h.reachable !== n.reachable || h.healthy !== n.healthy
      || h.stale !== stale.has(n.host) || h.quarantined !== (n.quarantine !== undefined)) return false;
  }
  return true;
}

export class NodeHealthListing {
  private readonly boot = randomBytes(6).toString('hex');
  private readonly last = new Map<HealthReadKind, { readonly hosts: readonly CcNodeHealth[]; readonly counter: number }>();
  private counter = 0;

  /**
   * The tuples of `view` and their version. While nothing changed since this kind's last read, the
   * very array of that read comes back (nothing is built) with the same version.
   */
  read(kind: HealthReadKind, view: ClusterView, stale: ReadonlySet<string>): { readonly version: string; readonly hosts: readonly CcNodeHealth[] } {
    let held = this.last.get(kind);
    if (held === undefined || !sameAsView(held.hosts, view, stale)) {
      // One counter for both kinds: a version names one content of one kind only.
      held = { hosts: view.entries.map((e) => tupleOf(e.node, stale.has(e.node.host))), counter: ++this.counter };
      this.last.set(kind, held);
    }
    return { version: `${this.boot}-${KIND_TAG[kind]}${held.counter}`, hosts: held.hosts };
  }
}
