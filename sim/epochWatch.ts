/**
 * The CC's side of "no split brain" in the simulator (issue 21): with CLC replicas each CC serves its
 * operations behind the product's epoch guard (cc/clcEpochGuard.ts) over a durable record on its
 * SimDisk, as cc/daemon.ts does, and this watch sits between the guard and the handlers. Invariant
 * 10a: once a CC has acted on a change carrying epoch E, it never acts on one carrying an older epoch
 * (across its restarts too: the highest is kept per CC for the whole run). It also counts the
 * refusals (StaleLeaderEpoch) for the coverage report.
 */
import { ClcEpochGuard, clcEpochStoreSpec, guardedByEpoch, type ClcEpochRecord } from '../cc/clcEpochGuard.js';
import { CC_EPOCH_OPS, type CC_OPS } from '../shared/protocol/ccProtocol.js';
import type { TypedImpl } from '../shared/protocol/typedServer.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { Store, StoreOptions } from '../shared/store/store.js';
import type { Violation } from './invariants.js';

type CcImpl = TypedImpl<typeof CC_OPS>;
type Handler = (req: { clcEpoch?: string }, ctx: unknown) => Promise<unknown>;

/** The options of the CC's epoch record (the daemon opens the same spec). */
export function epochStoreOptions(partition: string): StoreOptions<ClcEpochRecord> {
  return clcEpochStoreSpec(partition).options;
}

export class EpochWatch {
  /** Per CC name: the highest epoch one of its handlers acted on. */
  private readonly highest = new Map<string, bigint>();
  readonly violations: Violation[] = [];
  /** Changes a CC refused as sent by a deposed leader. */
  staleRefused = 0;
  /** Changes a CC acted on that carried an epoch. */
  accepted = 0;

  constructor(private readonly trace: (line: string) => void) {}

  /** `ops` as the CC daemon serves them with replicas in front: guarded by epoch, watched on both sides of the guard. */
  guard(cc: string, partition: string, ops: CcImpl, store: Store<ClcEpochRecord>): CcImpl {
    const inner = wrap(ops, (op, handle) => (req, ctx) => {
      this.acted(cc, op, req.clcEpoch);
      return handle(req, ctx);
    });
    const guarded = guardedByEpoch(inner, new ClcEpochGuard(store, partition));
    return wrap(guarded, (op, handle) => (req, ctx) => handle(req, ctx).catch((e: unknown) => {
      if (isFerryError(e) && e.code === 'StaleLeaderEpoch') {
        this.staleRefused++;
        this.trace(`${cc} refuses ${op} of epoch ${req.clcEpoch ?? '-'}: StaleLeaderEpoch`);
      }
      throw e;
    }));
  }

  private acted(cc: string, op: string, epoch: string | undefined): void {
    if (epoch === undefined) return;
    this.accepted++;
    const e = BigInt(epoch);
    const before = this.highest.get(cc);
    if (before !== undefined && e < before) {
      this.violations.push({ invariant: '10 stale epoch accepted', detail: `${cc} acted on ${op} of CLC epoch ${epoch} after one of epoch ${before}` });
    }
    if (before === undefined || e > before) this.highest.set(cc, e);
  }
}

/** `ops` with every CC_EPOCH_OPS handler replaced by `by(op, handler)`; reads untouched. */
function wrap(ops: CcImpl, by: (op: string, handle: Handler) => Handler): CcImpl {
  const out: Record<string, unknown> = { ...ops };
  for (const op of CC_EPOCH_OPS) {
    const handle = ops[op] as unknown as Handler | undefined;
    if (handle !== undefined) out[op] = by(op, handle.bind(ops));
  }
  return out as unknown as CcImpl;
}
