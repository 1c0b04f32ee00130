/**
 * Host HA's reads of a partition's nodes (issue 19): ccDescribeNodeHealth, only the health tuple of
 * each node, sent with the version of the last full answer of the same kind (cached or fresh) held
 * here; an `unchanged` answer hands back the very array held, so neither side encodes, validates or
 * indexes 10,000 nodes again while nothing changed. A CC that does not serve the operation (an older
 * one, during a rolling upgrade: it refuses UnknownOperation from the headers) is read with
 * ccDescribeNodes instead, and asked the new way again after LEGACY_RETRY_MS.
 */
import type { Clock } from '../../../shared/clock.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import type { CcNode, CcNodeHealth } from '../../../shared/protocol/ccProtocol.js';
import type { ClcCcRequest, ClcCcResponse } from '../../clusters/ccContract.js';
import type { Clusters } from '../../clusters/clusters.js';
import { ClcErrors } from '../../core/errors.js';

/** One read of a partition: every node's health tuple, and whether the CC that answered leads. */
export interface NodeHealthAnswer {
  readonly hosts: readonly CcNodeHealth[];
  /** Issue 21: false when a CC replica that does not lead answered; absent from a CC without replicas (it leads). */
  readonly leading?: boolean;
}

/** `cached`: as the CC's view holds the nodes, no NC asked; otherwise nodes older than `maxAgeMs` are asked again first. */
export type HealthRead = { readonly cached: true } | { readonly cached?: false; readonly maxAgeMs?: number };

/** How long a CC that refused ccDescribeNodeHealth is read with ccDescribeNodes before it is asked again. */
export const LEGACY_RETRY_MS = 60_000;

/** A node of ccDescribeNodes as the health tuple (an older CC without `stale`: there, an unreachable node's data is old). */
export function healthOfNode(n: CcNode): CcNodeHealth {
  return { host: n.host, nodeState: n.nodeState, reachable: n.reachable, healthy: n.healthy, stale: n.stale ?? !n.reachable, quarantined: n.quarantine !== undefined };
}

/** The CC does not serve the operation: the wire's refusal, as it arrives raw or translated (clc/clusters/ccFaults.ts). */
function notServed(e: unknown): boolean {
  return isFerryError(e) && e.fields.remoteCode === 'UnknownOperation';
}

type HealthResponse = ClcCcResponse<'ccDescribeNodeHealth'>;

export class NodeHealthReader {
  /** The last full answer per kind and partition. */
  private readonly held = new Map<string, { readonly version: string; readonly hosts: readonly CcNodeHealth[] }>();
  /** Partition → until when (clock ms) its CC is read with ccDescribeNodes. */
  private readonly legacyUntil = new Map<string, number>();

  constructor(private readonly clusters: Clusters, private readonly clock: Clock) {}

  async read(partition: string, how: HealthRead): Promise<NodeHealthAnswer> {
    const until = this.legacyUntil.get(partition);
    if (until !== undefined && this.clock.now() < until) return this.legacy(partition, how);
    const key = `${how.cached === true ? 'cached' : 'fresh'}:${partition}`;
    const held = this.held.get(key);
    let answer: HealthResponse;
    try {
      answer = await this.ask(partition, how, held?.version);
    } catch (e) {
      if (!notServed(e)) throw e;
      this.legacyUntil.set(partition, this.clock.now() + LEGACY_RETRY_MS);
      this.held.delete(key);
      return this.legacy(partition, how);
    }
    this.legacyUntil.delete(partition);
    if (answer.unchanged === true) {
      if (held !== undefined && answer.version === held.version) return withLeading(held.hosts, answer.leading);
      // Unchanged against a copy not held here (replaced by a concurrent read meanwhile): ask in full.
      answer = await this.ask(partition, how, undefined);
    }
    if (answer.hosts === undefined) {
      this.held.delete(key);
      throw ClcErrors.make('ServiceUnavailable', {
        partition, delivered: 'yes', detail: `the cluster controller of partition ${partition} answered ccDescribeNodeHealth without its hosts`,
      });
    }
    this.held.set(key, { version: answer.version, hosts: answer.hosts });
    return withLeading(answer.hosts, answer.leading);
  }

  private ask(partition: string, how: HealthRead, knownVersion: string | undefined): Promise<HealthResponse> {
    const req: ClcCcRequest<'ccDescribeNodeHealth'> = {
      ...(how.cached === true ? { cached: true } : how.maxAgeMs !== undefined ? { maxAgeMs: how.maxAgeMs } : {}),
      ...(knownVersion !== undefined ? { knownVersion } : {}),
    };
    return this.clusters.call(partition, 'ccDescribeNodeHealth', req);
  }

  /** An older CC: the whole ccDescribeNodes, as host HA read it before. */
  private async legacy(partition: string, how: HealthRead): Promise<NodeHealthAnswer> {
    const req = how.cached === true ? { cached: true } : how.maxAgeMs !== undefined ? { maxAgeMs: how.maxAgeMs } : {};
    const r = await this.clusters.call(partition, 'ccDescribeNodes', req);
    return withLeading(r.nodes.map(healthOfNode), r.leading);
  }
}

function withLeading(hosts: readonly CcNodeHealth[], leading: boolean | undefined): NodeHealthAnswer {
  return leading !== undefined ? { hosts, leading } : { hosts };
}
