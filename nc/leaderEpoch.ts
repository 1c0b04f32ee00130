/**
 * The NC's side of CC → NC epochs (issue 21, shared/protocol/leaderEpoch.ts): the highest CC leader
 * epoch this node has seen is kept in nc.json (`leaderEpoch`) and written before the command that
 * raised it acts, so a deposed CC leader's command is refused even across an NC restart.
 *
 * The rule is pure (`decideEpoch`, table-tested); `EpochGuard` runs it against the store. Epochs are
 * compared as big integers (etcd revisions are int64). Lost with nc.json (a lost store): the next
 * command sets it again, as a new node's first would.
 */
import type { Logger } from '../shared/log.js';
import type { z } from 'zod';
import { carriedEpoch, NC_CHANGE_OPS, NO_EPOCH } from '../shared/protocol/leaderEpoch.js';
import { NC_OPS } from '../shared/protocol/ncProtocol.js';
import { parseBody } from '../shared/wire/params.js';
import type { WireHandler, WireHandlers } from '../shared/wire/transport.js';
import type { Store } from '../shared/store/store.js';
import { isFerryError } from '../shared/errors/registry.js';
import { NcErrors } from './errors.js';

/** What a command's epoch means against the highest seen: act; persist it first, then act; or refuse. */
export type EpochDecision =
  | { readonly kind: 'accept' }
  | { readonly kind: 'advance'; readonly epoch: string }
  | { readonly kind: 'refuse'; readonly seen: string };

/** Pure: `seen` the highest epoch persisted (undefined: none yet, as "0"), `got` the command's. */
export function decideEpoch(seen: string | undefined, got: string): EpochDecision {
  const s = BigInt(seen ?? NO_EPOCH);
  const g = BigInt(got);
  if (g < s) return { kind: 'refuse', seen: s.toString() };
  if (g > s) return { kind: 'advance', epoch: g.toString() };
  return { kind: 'accept' };
}

export class EpochGuard {
  constructor(private readonly o: {
    readonly host: string;
    readonly store: Store<{ leaderEpoch?: string | undefined }>;
    readonly logger: Logger;
  }) {}

  get host(): string {
    return this.o.host;
  }

  /** The highest epoch persisted (for tests and the log). */
  seen(): string {
    return this.o.store.read().leaderEpoch ?? NO_EPOCH;
  }

  /**
   * Resolves when `operation` carrying `epoch` may act (a higher epoch persisted first); rejects with
   * NcErrors StaleLeaderEpoch (older than seen) or StateWriteFailed (the new epoch could not be written).
   */
  async admit(epoch: string, operation: string): Promise<void> {
    const first = decideEpoch(this.o.store.read().leaderEpoch, epoch);
    if (first.kind === 'accept') return;
    if (first.kind === 'refuse') throw this.refusal(first.seen, epoch, operation);
    let decided: EpochDecision;
    try {
      // Decided again inside the write: a higher epoch persisted meanwhile wins.
      decided = await this.o.store.update((draft) => {
        const d = decideEpoch(draft.leaderEpoch, epoch);
        if (d.kind === 'advance') draft.leaderEpoch = d.epoch;
        return d;
      });
    } catch (e) {
      if (isFerryError(e) && NcErrors.has(e.code)) throw e;
      throw NcErrors.make('StateWriteFailed', { host: this.o.host, detail: `leader epoch ${epoch}: ${(e as Error).message}` });
    }
    if (decided.kind === 'refuse') throw this.refusal(decided.seen, epoch, operation);
    if (decided.kind === 'advance') this.o.logger.info({ epoch, operation }, 'a newer CC leader\'s epoch: persisted; older ones are refused from now on');
  }

  private refusal(seen: string, got: string, operation: string): Error {
    this.o.logger.warn({ seen, got, operation }, 'a command from a deposed CC leader was refused');
    return NcErrors.make('StaleLeaderEpoch', { host: this.o.host, seen, got, operation });
  }
}

/**
 * NC_CHANGE_OPS wrapped so each checks its epoch before acting: the body is validated first (a bad
 * request changes nothing, not even the epoch), then admitted, then handled as before.
 */
export function guardChanges(handlers: WireHandlers, guard: EpochGuard): WireHandlers {
  const host = guard.host;
  const out: Record<string, WireHandler> = { ...handlers };
  for (const op of NC_CHANGE_OPS) {
    const handle = handlers[op];
    const spec = (NC_OPS as Record<string, { readonly request: z.ZodType } | undefined>)[op];
    if (handle === undefined || spec === undefined) continue;
    out[op] = async (body, ctx) => {
      parseBody(spec.request, body);
      const epoch = carriedEpoch(body);
      if (epoch === undefined) throw NcErrors.make('InvalidLeaderEpoch', { host, operation: op });
      await guard.admit(epoch, op);
      return handle(body, ctx);
    };
  }
  return Object.freeze(out);
}
