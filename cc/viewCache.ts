/**
 * The last view, persisted in <state-dir>/cc.json only as a cache: it lets a restarted CC answer
 * for an NC that is down (marked unreachable), and nothing read from it is ever preferred to what
 * an NC reports. Writes are coalesced: only the newest view is written, one write at a time.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from 'pino';
import { ccNodeSchema, type CcNode } from '../shared/protocol/ccProtocol.js';
import { partitionSchema } from '../shared/protocol/common.js';
import { openFileStore, type Store } from '../shared/store/store.js';
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

export function openViewStore(stateDir: string): Promise<Store<ViewSnapshot>> {
  return openFileStore(join(stateDir, 'cc.json'), {
    kind: CACHE_KIND, schemaVersion: CACHE_SCHEMA_VERSION, initial: emptySnapshot, validate: (d) => cacheSchema.parse(d),
  });
}

/** Cached nodes of `partition` (a cache written for another partition is ignored). */
export function cachedNodes(snapshot: ViewSnapshot, partition: string): CcNode[] {
  return snapshot.partition === partition ? snapshot.nodes : [];
}

export class ViewCacheWriter {
  private pending: ViewSnapshot | undefined;
  private writing: Promise<void> | undefined;

  constructor(private readonly store: Store<ViewSnapshot>, private readonly logger: Logger) {}

  /** Queues `view` to be written; returns at once. A later save replaces an unwritten one. */
  save(view: ClusterView): void {
    this.pending = toSnapshot(view);
    this.writing ??= this.drain();
  }

  /** Resolves once everything saved so far is on disk (for shutdown and tests). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending) {
        const next = this.pending;
        this.pending = undefined;
        try {
          await this.store.update((draft) => {
            draft.partition = next.partition;
            draft.nodes = next.nodes;
          });
        } catch (e) {
          // Only a cache: the CC keeps serving from memory and tries again with the next view.
          this.logger.warn({ err: e }, 'could not write the view cache');
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
