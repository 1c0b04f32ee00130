/**
 * The instances a request sees: every visible one (DescribeInstances, DescribeTags), and resolving
 * the ids a request names (DescribeInstances, TerminateInstances, MigrateInstances of one instance).
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { askAllPartitions } from '../clusters/fanOut.js';
import { ClcErrors } from './errors.js';
import { liveInstances, mergeInstances, type InstanceView, type MergedInstances } from './instanceView.js';
import type { OperationContext } from './operationContext.js';

export interface VisibleInstances {
  readonly merged: MergedInstances;
  /** Partitions whose CC did not answer, with why. */
  readonly unavailable: ReadonlyMap<string, FerryError>;
  /**
   * What `merged` was made of, as objects: the CLC's records and each partition's answer, in order.
   * The same objects again (the CCs answered `unchanged`, no record was written) make the same
   * `merged`; a renderer may reuse what it made of them (sameSources).
   */
  readonly sources: readonly unknown[];
}

/** True when two reads were made of the very same objects (so their views are equal). */
export function sameSources(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const lastMerge = new WeakMap<object, { readonly sources: readonly unknown[]; readonly merged: MergedInstances }>();

/** Every instance of the partitions that answer, the CCs' reports joined with the CLC's records. */
export async function visibleInstances(ctx: Pick<OperationContext, 'clusters' | 'store' | 'logger'>): Promise<VisibleInstances> {
  const fan = await askAllPartitions(ctx.clusters, 'ccDescribeInstances', {}, ctx.logger);
  const { live, incomplete } = liveInstances(fan.answers);
  const records = ctx.store.read().instances;
  const sources = [records, ...[...fan.answers].flat(), ...[...fan.unavailable].flat()];
  // The same objects merge the same: the last merge of this store's CLC is reused for them.
  const last = lastMerge.get(ctx.store);
  if (last !== undefined && sameSources(last.sources, sources)) return { merged: last.merged, unavailable: fan.unavailable, sources };
  const merged = mergeInstances(records, live, incomplete);
  lastMerge.set(ctx.store, { sources, merged });
  return { merged, unavailable: fan.unavailable, sources };
}

/**
 * The views of `ids`, in order. Every id is checked before anything is returned: unknown ids are
 * InvalidInstanceID.NotFound (all of them named); ids whose partition did not answer are
 * ServiceUnavailable, since they exist but their state cannot be told now.
 */
export function requireInstances(
  ids: readonly string[], merged: MergedInstances, unavailable: ReadonlyMap<string, FerryError>,
): InstanceView[] {
  const byId = new Map(merged.views.map((v) => [v.instanceId, v]));
  const missing = ids.filter((id) => !byId.has(id) && !merged.unknown.has(id));
  if (missing.length > 0) throw instanceNotFound(missing);
  const unreachable = ids.filter((id) => merged.unknown.has(id));
  if (unreachable.length > 0) {
    const partitions = [...new Set(unreachable.map((id) => merged.unknown.get(id) as string))];
    const why = partitions.map((p) => unavailable.get(p)?.message ?? `partition ${p} is not configured`).join('; ');
    throw ClcErrors.make('ServiceUnavailable', {
      partition: partitions.join(','), delivered: 'no',
      detail: `the state of ${unreachable.join(', ')} cannot be told now: ${why}`,
    });
  }
  return ids.map((id) => byId.get(id) as InstanceView);
}

/** InvalidInstanceID.NotFound naming every id, in EC2's words. */
export function instanceNotFound(ids: readonly string[]): FerryError {
  const idsDo = ids.length === 1 ? `ID '${ids[0] ?? ''}' does` : `IDs '${ids.join(', ')}' do`;
  return ClcErrors.make('InvalidInstanceID.NotFound', { ids: ids.join(', '), idsDo });
}

export function dedupe(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
