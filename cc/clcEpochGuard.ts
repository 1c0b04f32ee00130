/**
 * The CC's side of "no split brain" (issue 21): every command that changes a node or an instance
 * (CC_EPOCH_OPS) carries the sending CLC leader's epoch; the CC keeps the highest it has seen, durably
 * (its own store: cc-clc-epoch.json, or `<etcd-prefix>cc/<partition>/clcEpoch/`), and refuses an older
 * one with StaleLeaderEpoch before anything is done. A new leader's first command here is acted on
 * only once its epoch is persisted, so a CC restart never forgets that a leader was deposed. A command
 * without an epoch (the file-store single CLC, a CLC before epochs) is not checked.
 */
import { z } from 'zod';
import type { TypedImpl } from '../shared/protocol/typedServer.js';
import { CC_EPOCH_OPS, type CC_OPS, type CcOp } from '../shared/protocol/ccProtocol.js';
import { clcEpochSchema, epochStanding, maxEpoch } from '../shared/protocol/clcEpoch.js';
import type { Store, StoreOptions } from '../shared/store/store.js';
import type { StoreSpec } from '../shared/store/storeBackend.js';
import { CcErrors } from './errors.js';

const epochRecordSchema = z.object({
  /** The highest CLC epoch this CC has acted under; null until a CLC sent one. */
  highest: clcEpochSchema.nullable(),
});
export type ClcEpochRecord = z.infer<typeof epochRecordSchema>;

const EPOCH_STORE_OPTIONS: StoreOptions<ClcEpochRecord> = Object.freeze({
  kind: 'ferry-cc-clc-epoch', schemaVersion: 1, initial: () => ({ highest: null }), validate: (d: unknown) => epochRecordSchema.parse(d),
});

export const CLC_EPOCH_STORE_FILE = 'cc-clc-epoch.json';

export function clcEpochStoreSpec(partition: string): StoreSpec<ClcEpochRecord> {
  return Object.freeze<StoreSpec<ClcEpochRecord>>({ file: CLC_EPOCH_STORE_FILE, key: `cc/${partition}/clcEpoch`, options: EPOCH_STORE_OPTIONS });
}

export class ClcEpochGuard {
  /** The highest epoch offered and being (or already) persisted. */
  private seen: string | undefined;
  /** The highest epoch known durable. */
  private durable: string | undefined;
  /** The write of `seen`, while it runs. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store<ClcEpochRecord>, private readonly partition: string) {
    this.durable = store.read().highest ?? undefined;
    this.seen = this.durable;
  }

  /** The highest epoch known durable (for tests and the log). */
  highest(): string | undefined {
    return this.durable;
  }

  /**
   * Resolves when a command carrying `offered` may be acted on: its epoch is not older than any seen,
   * and is durable. Rejects with StaleLeaderEpoch (nothing done), or the store's error when the new
   * epoch could not be written (nothing done; the next command with it writes again).
   */
  async admit(op: string, offered: string | undefined): Promise<void> {
    if (offered === undefined) return;
    // Another CC replica may have written a higher one (the etcd store is watch-fed).
    const stored = this.store.read().highest ?? undefined;
    this.durable = maxEpoch(this.durable, stored);
    this.seen = maxEpoch(this.seen, stored);
    const standing = epochStanding(this.seen, offered);
    if (standing === 'stale') throw this.stale(op, offered);
    if (standing === 'newer') {
      this.seen = offered;
      this.writing = this.persist(offered);
    }
    if (epochStanding(this.durable, offered) === 'newer') await this.writing;
    // A newer leader's epoch arrived while this one was being written: this sender is deposed.
    if (epochStanding(this.seen, offered) === 'stale') throw this.stale(op, offered);
  }

  private persist(epoch: string): Promise<void> {
    const write = this.writing.catch(() => undefined).then(() => this.store.update((d) => {
      d.highest = maxEpoch(d.highest ?? undefined, epoch) ?? null;
    })).then(() => {
      this.durable = maxEpoch(this.durable, epoch);
    });
    write.catch(() => {
      // Not durable: forget it, so the next command with this epoch writes it again.
      if (this.seen === epoch) this.seen = this.durable;
    });
    return write;
  }

  private stale(op: string, offered: string) {
    return CcErrors.make('StaleLeaderEpoch', { operation: op, epoch: offered, highest: this.seen ?? '', partition: this.partition });
  }
}

type CcImpl = TypedImpl<typeof CC_OPS>;

/** The CC's handlers with the guard in front of every CC_EPOCH_OPS operation; reads pass untouched. */
export function guardedByEpoch(ops: CcImpl, guard: ClcEpochGuard): CcImpl {
  const out: Record<string, unknown> = { ...ops };
  for (const op of CC_EPOCH_OPS) {
    const handler = ops[op] as (req: { clcEpoch?: string }, ctx: Parameters<CcImpl[CcOp]>[1]) => Promise<unknown>;
    out[op] = async (req: { clcEpoch?: string }, ctx: Parameters<CcImpl[CcOp]>[1]) => {
      await guard.admit(op, req.clcEpoch);
      return handler(req, ctx);
    };
  }
  return out as CcImpl;
}
