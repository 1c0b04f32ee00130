/**
 * The last view, persisted in <state-dir>/cc.json only as a cache: it lets a restarted CC answer
 * for an NC that is down (marked unreachable), and nothing read from it is ever preferred to what
 * an NC reports. Writes are coalesced and spaced: only the newest view is written, one write at a
 * time, a change within a second and a node merely seen again within half a minute.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../shared/clock.js';
import { ccNodeSchema, type CcNode } from '../shared/protocol/ccProtocol.js';
import { partitionSchema } from '../shared/protocol/common.js';
import { paddedKey } from '../shared/store/etcdLayout.js';
import { openFileStore, type Store, type StoreOptions } from '../shared/store/store.js';
import type { StoreSpec } from '../shared/store/storeBackend.js';
import { listNodes, type ClusterView } from './view.js';

export const CACHE_KIND = 'ferry-cc';
export const CACHE_SCHEMA_VERSION = 1;

const cacheSchema = z.object({
  /** Null until the first view is written. */
  partition: partitionSchema.nullable(),
  nodes: z.array(ccNodeSchema),
});
export type ViewSnapshot = z.infer<typeof cacheSchema>;

export function emptySnapshot(): ViewSnapshot {
  return { partition: null, nodes: [] };
}

export function toSnapshot(view: ClusterView): ViewSnapshot {
  return { partition: view.partition, nodes: listNodes(view) };
}

const VIEW_STORE_OPTIONS: StoreOptions<ViewSnapshot> = Object.freeze({
  kind: CACHE_KIND, schemaVersion: CACHE_SCHEMA_VERSION, initial: emptySnapshot, validate: (d: unknown) => cacheSchema.parse(d),
});

export const VIEW_STORE_FILE = 'cc.json';

export function openViewStore(stateDir: string): Promise<Store<ViewSnapshot>> {
  return openFileStore(join(stateDir, VIEW_STORE_FILE), VIEW_STORE_OPTIONS);
}

/**
 * cc.json, or `<etcd-prefix>cc/<partition>/view/` with one key per node (by its position in the
 * registration order) and every node's lastSeen in one more key: a save sends only the nodes that
 * changed, and a round that only saw nodes again sends that one key. Nodes are independent (a cache:
 * a first save of 2,000 nodes lands in several txns, any part of which is a usable cache).
 */
export function viewStoreSpec(partition: string): StoreSpec<ViewSnapshot> {
  return Object.freeze<StoreSpec<ViewSnapshot>>({
    file: VIEW_STORE_FILE, key: `cc/${partition}/view`, options: VIEW_STORE_OPTIONS,
    layout: { collections: { nodes: { kind: 'list', keyOf: (_node: unknown, i: number) => paddedKey(i), independent: true, detached: ['lastSeen'] } } },
  });
}

/** Cached nodes of `partition` (a cache written for another partition is ignored). */
export function cachedNodes(snapshot: ViewSnapshot, partition: string): CcNode[] {
  return snapshot.partition === partition ? snapshot.nodes : [];
}

/** How soon after a change the cache is written: a real change within a second, a node merely seen again within half a minute. */
export interface CacheSpacing {
  readonly changeMs: number;
  readonly seenMs: number;
}

export const DEFAULT_CACHE_SPACING: CacheSpacing = Object.freeze({ changeMs: 1000, seenMs: 30_000 });

/**
 * Writes the newest view, one write at a time, at most once per spacing: each write serialises the
 * whole view, so writing after every poll made a poll round quadratic in the cluster's size. The
 * snapshot is taken when the write starts, never per save.
 */
export class ViewCacheWriter {
  private pending: ClusterView | undefined;
  private pendingChange = false;
  private writing: Promise<void> | undefined;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private timer: { readonly at: number; readonly handle: TimerHandle } | undefined;

  constructor(
    private readonly store: Store<ViewSnapshot>,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly spacing: CacheSpacing = DEFAULT_CACHE_SPACING,
  ) {}

  /** Queues `view` to be written; returns at once. A later save replaces an unwritten one. `change` false: only lastSeen moved. */
  save(view: ClusterView, change = true): void {
    this.pending = view;
    this.pendingChange ||= change;
    this.schedule();
  }

  /** Writes what is pending now and resolves once everything saved so far is on disk (for shutdown and tests). */
  async flush(): Promise<void> {
    this.timer?.handle.cancel();
    this.timer = undefined;
    for (;;) {
      if (this.writing) await this.writing;
      else if (this.pending) this.writing = this.drain();
      else return;
    }
  }

  private schedule(): void {
    if (this.writing || !this.pending) return; // the drain loop picks it up
    const at = this.lastWriteAt + (this.pendingChange ? this.spacing.changeMs : this.spacing.seenMs);
    const now = this.clock.now();
    if (at <= now) {
      this.timer?.handle.cancel();
      this.timer = undefined;
      this.writing = this.drain();
      return;
    }
    if (this.timer && this.timer.at <= at) return;
    this.timer?.handle.cancel();
    const handle = this.clock.setTimer(at - now, () => {
      this.timer = undefined;
      this.schedule();
    });
    this.timer = { at, handle };
  }

  private async drain(): Promise<void> {
    try {
      const view = this.pending;
      this.pending = undefined;
      this.pendingChange = false;
      if (!view) return;
      this.lastWriteAt = this.clock.now();
      const next = toSnapshot(view);
      try {
        await this.store.update((draft) => {
          draft.partition = next.partition;
          draft.nodes = next.nodes;
        });
      } catch (e) {
        // Only a cache: the CC keeps serving from memory and tries again with the next view.
        this.logger.warn({ err: e }, 'could not write the view cache');
      }
    } finally {
      this.writing = undefined;
    }
    this.schedule();
  }
}
