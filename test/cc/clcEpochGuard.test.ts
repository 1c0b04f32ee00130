/**
 * The CC's refusal of a deposed CLC leader's commands (issue 21, cc/clcEpochGuard.ts), over a
 * hand-written store whose writes a test holds or fails (STYLE habit 4).
 */
import { describe, expect, it } from 'vitest';
import { ClcEpochGuard, guardedByEpoch, type ClcEpochRecord } from '../../cc/clcEpochGuard.js';
import { CcErrors } from '../../cc/errors.js';
import type { TypedImpl } from '../../shared/protocol/typedServer.js';
import { CC_EPOCH_OPS, CC_OPS } from '../../shared/protocol/ccProtocol.js';
import type { Store } from '../../shared/store/store.js';
import { StoreErrors } from '../../shared/store/errors.js';

/** A store in memory; `hold()` keeps the next writes pending until released, `failNext()` makes the next write fail. */
class HeldStore implements Store<ClcEpochRecord> {
  data: ClcEpochRecord;
  writes: string[] = [];
  private held: (() => void)[] | undefined;
  private failing = false;

  constructor(highest: string | null = null) {
    this.data = { highest };
  }

  read(): ClcEpochRecord {
    return this.data;
  }

  async update<R>(mutate: (draft: ClcEpochRecord) => R): Promise<R> {
    if (this.held) await new Promise<void>((r) => this.held!.push(r));
    if (this.failing) {
      this.failing = false;
      throw StoreErrors.make('StoreWriteFailed', { file: 'cc-clc-epoch.json', detail: 'ENOSPC' });
    }
    const draft = structuredClone(this.data);
    const r = mutate(draft);
    this.data = draft;
    this.writes.push(draft.highest ?? 'null');
    return r;
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const waiting = this.held ?? [];
    this.held = undefined;
    for (const r of waiting) r();
  }

  failNext(): void {
    this.failing = true;
  }
}

const refusal = (p: Promise<unknown>) => p.then(() => 'acted', (e: { code?: string }) => e.code ?? String(e));

describe('ClcEpochGuard', () => {
  it('passes a command without an epoch (the single CLC) and writes nothing', async () => {
    const store = new HeldStore('12');
    const guard = new ClcEpochGuard(store, 'cluster01');
    await guard.admit('ccModifyNode', undefined);
    expect(store.writes).toEqual([]);
  });

  it('persists a new leader\'s epoch before the command is admitted, then refuses the old leader', async () => {
    const store = new HeldStore();
    const guard = new ClcEpochGuard(store, 'cluster01');
    await guard.admit('ccModifyNode', '9');
    expect(store.data.highest).toBe('9');
    store.hold();
    let admitted = false;
    const newer = guard.admit('ccModifyNode', '10').then(() => { admitted = true; });
    // Not admitted while its epoch is not durable; the old leader is refused at once meanwhile.
    expect(await refusal(guard.admit('ccRunInstances', '9'))).toBe('StaleLeaderEpoch');
    await Promise.resolve();
    expect(admitted).toBe(false);
    store.release();
    await newer;
    expect(admitted).toBe(true);
    expect(store.writes).toEqual(['9', '10']);
    // The current leader again: nothing more to write.
    await guard.admit('ccTerminateInstances', '10');
    expect(store.writes).toEqual(['9', '10']);
    expect(guard.highest()).toBe('10');
  });

  it('the refusal names the operation, both epochs and the partition, and is the client\'s fault', async () => {
    const guard = new ClcEpochGuard(new HeldStore('100'), 'cluster01');
    const e = await guard.admit('ccSetFencedHosts', '99').catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'StaleLeaderEpoch', status: 409, clientFault: true, retryable: false });
    expect((e as Error).message).toContain('ccSetFencedHosts carries CLC epoch 99, older than epoch 100');
    expect(CcErrors.has('StaleLeaderEpoch')).toBe(true);
  });

  it('a CC restarted from its store still refuses the deposed leader', async () => {
    const store = new HeldStore();
    await new ClcEpochGuard(store, 'cluster01').admit('ccModifyNode', '57');
    const restarted = new ClcEpochGuard(store, 'cluster01');
    expect(await refusal(restarted.admit('ccModifyNode', '56'))).toBe('StaleLeaderEpoch');
    await restarted.admit('ccModifyNode', '57');
  });

  it('a command waiting for its epoch\'s write is refused when a newer leader\'s epoch arrives meanwhile', async () => {
    const store = new HeldStore('5');
    const guard = new ClcEpochGuard(store, 'cluster01');
    store.hold();
    const older = refusal(guard.admit('ccModifyNode', '6'));
    const newer = refusal(guard.admit('ccModifyNode', '7'));
    store.release();
    expect(await older).toBe('StaleLeaderEpoch');
    expect(await newer).toBe('acted');
    expect(store.data.highest).toBe('7');
  });

  it('an epoch that could not be written admits nothing, and the next command with it writes it again', async () => {
    const store = new HeldStore('3');
    const guard = new ClcEpochGuard(store, 'cluster01');
    store.failNext();
    expect(await refusal(guard.admit('ccModifyNode', '4'))).toBe('StoreWriteFailed');
    expect(store.data.highest).toBe('3');
    await guard.admit('ccModifyNode', '4');
    expect(store.data.highest).toBe('4');
  });

  it('sees a higher epoch another CC replica wrote to the shared store', async () => {
    const store = new HeldStore('3');
    const guard = new ClcEpochGuard(store, 'cluster01');
    store.data = { highest: '8' };
    expect(await refusal(guard.admit('ccModifyNode', '7'))).toBe('StaleLeaderEpoch');
  });
});

describe('guardedByEpoch', () => {
  /** Handlers that only count their calls. */
  function counting(): { impl: TypedImpl<typeof CC_OPS>; calls: string[] } {
    const calls: string[] = [];
    const impl = Object.fromEntries(Object.keys(CC_OPS).map((op) => [op, async () => {
      calls.push(op);
      return {};
    }])) as unknown as TypedImpl<typeof CC_OPS>;
    return { impl, calls };
  }
  const ctx = { peer: '127.0.94.254' };

  it.each([...CC_EPOCH_OPS])('%s from a deposed leader never reaches its handler', async (op) => {
    const { impl, calls } = counting();
    const guarded = guardedByEpoch(impl, new ClcEpochGuard(new HeldStore('20'), 'cluster01'));
    const handler = guarded[op] as (req: unknown, c: typeof ctx) => Promise<unknown>;
    expect(await refusal(handler({ clcEpoch: '19' }, ctx))).toBe('StaleLeaderEpoch');
    expect(calls).toEqual([]);
    expect(await refusal(handler({ clcEpoch: '20' }, ctx))).toBe('acted');
    expect(calls).toEqual([op]);
  });

  it('reads pass whatever they carry', async () => {
    const { impl, calls } = counting();
    const guarded = guardedByEpoch(impl, new ClcEpochGuard(new HeldStore('20'), 'cluster01'));
    await guarded.ccDescribeNodes({ clcEpoch: '1' } as never, ctx);
    await guarded.ccCheckHostActivity({} as never, ctx);
    expect(calls).toEqual(['ccDescribeNodes', 'ccCheckHostActivity']);
  });
});
