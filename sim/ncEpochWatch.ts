/**
 * The NC's side of "no split brain" in the simulator (issue 21): with CC replicas each NC serves behind
 * the product's epoch guard (nc/leaderEpoch.ts guardChanges over its own nc.json, as nc/main.ts wires
 * it), and this watch sits between the guard and the handlers. Invariant 10c: once an NC has acted on a
 * change carrying CC leader epoch E, it never acts on one carrying an older epoch (across its
 * restarts; a lost nc.json forgets, as the product documents: the next command sets it again). It also
 * counts the refusals (StaleLeaderEpoch) for the coverage report.
 */
import { EpochGuard, guardChanges } from '../nc/leaderEpoch.js';
import { isFerryError } from '../shared/errors/registry.js';
import { silentLogger } from '../shared/log.js';
import { carriedEpoch, NC_CHANGE_OPS } from '../shared/protocol/leaderEpoch.js';
import type { Store } from '../shared/store/store.js';
import type { WireHandler, WireHandlers } from '../shared/wire/transport.js';
import type { Violation } from './invariants.js';

export class NcEpochWatch {
  /** Per host: the highest CC epoch one of its handlers acted on. */
  private readonly highest = new Map<string, bigint>();
  readonly violations: Violation[] = [];
  /** Changes an NC refused as sent by a deposed CC leader. */
  staleRefused = 0;
  /** Changes an NC acted on that carried a CC epoch above "0". */
  accepted = 0;

  constructor(private readonly trace: (line: string) => void) {}

  /** `handlers` as nc/main.ts serves them: every change checked against the highest epoch in `store`, watched on both sides of the guard. */
  guard(host: string, handlers: WireHandlers, store: Store<{ leaderEpoch?: string | undefined }>): WireHandlers {
    const inner = wrap(handlers, (op, handle) => (body, ctx) => {
      this.acted(host, op, carriedEpoch(body));
      return handle(body, ctx);
    });
    const guarded = guardChanges(inner, new EpochGuard({ host, store, logger: silentLogger() }));
    return wrap(guarded, (op, handle) => (body, ctx) => handle(body, ctx).catch((e: unknown) => {
      if (isFerryError(e) && e.code === 'StaleLeaderEpoch') {
        this.staleRefused++;
        this.trace(`nc ${host} refuses ${op} of CC epoch ${String(body.leaderEpoch ?? '-')}: StaleLeaderEpoch`);
      }
      throw e;
    }));
  }

  /** The host's nc.json was lost: it forgets the epochs it saw (the product's documented gap). */
  forget(host: string): void {
    this.highest.delete(host);
  }

  private acted(host: string, op: string, epoch: string | undefined): void {
    if (epoch === undefined) return;
    const e = BigInt(epoch);
    if (e > 0n) this.accepted++;
    const before = this.highest.get(host);
    if (before !== undefined && e < before) {
      this.violations.push({ invariant: '10c stale CC epoch accepted', detail: `nc ${host} acted on ${op} of CC epoch ${epoch} after one of epoch ${before}` });
    }
    if (before === undefined || e > before) this.highest.set(host, e);
  }
}

/** `handlers` with every NC_CHANGE_OPS handler replaced by `by(op, handler)`; reads untouched. */
function wrap(handlers: WireHandlers, by: (op: string, handle: WireHandler) => WireHandler): WireHandlers {
  const out: Record<string, WireHandler> = { ...handlers };
  for (const op of NC_CHANGE_OPS) {
    const handle = handlers[op];
    if (handle !== undefined) out[op] = by(op, handle);
  }
  return out;
}
