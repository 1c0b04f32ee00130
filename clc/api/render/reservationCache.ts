/**
 * DescribeInstances' rendered reservations, kept for the next identical read (issue 19, the API
 * path): when a request selects the same instances (same ids and filters, no paging) out of the very
 * same sources (the CCs answered `unchanged` and no CLC record was written: sameSources), its
 * reservationSet is the same XML, so it is written once and reused. Per CLC store (a WeakMap on it),
 * a few selections at most, the oldest dropped first.
 */
import { sameSources } from '../../core/instanceLookup.js';
import type { RawXml } from '../xmlWriter.js';

const MAX_SELECTIONS = 8;

interface Kept {
  readonly sources: readonly unknown[];
  readonly xml: RawXml;
}

export class RenderCache {
  private readonly kept = new Map<string, Kept>();

  /** The XML rendered for `selection` from `sources` before, or `render()`'s, then kept. */
  get(selection: string, sources: readonly unknown[], render: () => RawXml): RawXml {
    const hit = this.kept.get(selection);
    if (hit !== undefined && sameSources(hit.sources, sources)) return hit.xml;
    const xml = render();
    this.kept.delete(selection);
    this.kept.set(selection, { sources, xml });
    if (this.kept.size > MAX_SELECTIONS) this.kept.delete(this.kept.keys().next().value as string);
    return xml;
  }
}

const caches = new WeakMap<object, RenderCache>();

/** The cache of one CLC (keyed by its store). */
export function renderCacheOf(owner: object): RenderCache {
  let c = caches.get(owner);
  if (c === undefined) {
    c = new RenderCache();
    caches.set(owner, c);
  }
  return c;
}
