/**
 * Group commit (shared/store/groupCommit.ts) against a simple sequential model: whatever the
 * interleaving of calls and write completions, the updates give the same per-call outcomes and final
 * state as running them one by one; read() only ever shows what a write made durable; a failed write
 * rejects its whole batch and changes nothing. The writes are a hand-written fake the test completes
 * (or fails) step by step, so the interleavings are the schedule's, not the machine's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GroupCommitStore } from '../../shared/store/groupCommit.js';

interface S { n: number; items: number[]; rec: Record<string, number> }
const initial = (): S => ({ n: 0, items: [], rec: {} });

/** What an update does; `flaky` changes the draft, then throws when the state it made has an even n. */
type Op =
  | { readonly kind: 'add'; readonly v: number }
  | { readonly kind: 'set'; readonly k: string; readonly v: number }
  | { readonly kind: 'del'; readonly k: string }
  | { readonly kind: 'flaky'; readonly v: number };

class Refused extends Error {}

function mutateOf(op: Op): (d: S) => string {
  return (d) => {
    switch (op.kind) {
      case 'add': d.n += op.v; d.items.push(op.v); break;
      case 'set': d.rec[op.k] = op.v; break;
      case 'del': delete d.rec[op.k]; break;
      case 'flaky':
        d.items.push(op.v);
        d.rec.flaky = op.v;
        d.n += 1;
        if (d.n % 2 === 0) throw new Refused(`n=${d.n}`);
        break;
    }
    return `${d.n}/${d.items.length}/${Object.keys(d.rec).length}`;
  };
}

type Outcome = { ok: string } | { threw: string };

/** The model: each op alone, one after another, on a copy it keeps only when the op returns. */
function sequential(ops: readonly Op[], from: S = initial()): { state: S; outcomes: Outcome[] } {
  let state = from;
  const outcomes = ops.map((op): Outcome => {
    const d = structuredClone(state);
    try {
      const ok = mutateOf(op)(d);
      state = d;
      return { ok };
    } catch (e) {
      return { threw: (e as Error).message };
    }
  });
  return { state, outcomes };
}

/** A write the test completes: at most one is ever in flight. */
class FakeDisk {
  durable: S = initial();
  readonly inFlight: { next: S; done: (ok: boolean) => void }[] = [];
  writes = 0;
  overlapped = false;

  persist = (next: S): Promise<void> => {
    this.writes++;
    if (this.inFlight.length > 0) this.overlapped = true;
    return new Promise((resolve, reject) => {
      this.inFlight.push({
        next: structuredClone(next),
        done: (ok) => {
          if (ok) {
            this.durable = structuredClone(next);
            resolve();
          } else {
            reject(new Error('disk full'));
          }
        },
      });
    });
  };

  /** Completes the oldest write; false when none is in flight. */
  complete(ok: boolean): boolean {
    const w = this.inFlight.shift();
    w?.done(ok);
    return w !== undefined;
  }
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), v: fc.integer({ min: -3, max: 9 }) }),
  fc.record({ kind: fc.constant('set' as const), k: fc.constantFrom('a', 'b', 'c'), v: fc.integer({ min: 0, max: 9 }) }),
  fc.record({ kind: fc.constant('del' as const), k: fc.constantFrom('a', 'b', 'c') }),
  fc.record({ kind: fc.constant('flaky' as const), v: fc.integer({ min: 0, max: 9 }) }),
);
/** A schedule: call an update, let microtasks run, or complete the write in flight (well or badly). */
type Step = { readonly call: Op } | { readonly tick: true } | { readonly complete: boolean };
const stepArb = (failures: boolean): fc.Arbitrary<Step> => fc.oneof(
  { weight: 5, arbitrary: opArb.map((call) => ({ call })) },
  { weight: 2, arbitrary: fc.constant({ tick: true as const }) },
  { weight: 2, arbitrary: (failures ? fc.boolean() : fc.constant(true)).map((complete) => ({ complete })) },
);

interface Run { ops: Op[]; outcomes: (Outcome | { writeFailed: string } | undefined)[]; store: GroupCommitStore<S>; disk: FakeDisk }

/** Plays a schedule, then completes every write left well; checks read() is the durable state throughout. */
async function play(steps: readonly Step[]): Promise<Run> {
  const disk = new FakeDisk();
  const store = new GroupCommitStore<S>(initial(), { persist: disk.persist });
  const ops: Op[] = [];
  const outcomes: Run['outcomes'] = [];
  const pending: Promise<void>[] = [];
  const checkVisible = (): void => { expect(store.read()).toEqual(disk.durable); };
  for (const step of steps) {
    if ('call' in step) {
      const i = ops.push(step.call) - 1;
      outcomes.push(undefined);
      pending.push(store.update(mutateOf(step.call)).then(
        (ok) => { checkVisible(); outcomes[i] = { ok }; },
        (e: Error) => { checkVisible(); outcomes[i] = e instanceof Refused ? { threw: e.message } : { writeFailed: e.message }; },
      ));
    } else if ('tick' in step) {
      await settle();
    } else {
      disk.complete(step.complete);
      await settle();
    }
    checkVisible();
  }
  for (let guard = 0; outcomes.some((o) => o === undefined); guard++) {
    if (guard > 10_000) throw new Error('updates never settled');
    await settle();
    disk.complete(true);
  }
  await Promise.all(pending);
  return { ops, outcomes, store, disk };
}

describe('group commit against the sequential model', () => {
  it('gives every call the outcome it has one by one, and the same final state, whatever the interleaving (writes succeed)', async () => {
    await fc.assert(fc.asyncProperty(fc.array(stepArb(false), { maxLength: 60 }), async (steps) => {
      const run = await play(steps);
      const model = sequential(run.ops);
      expect(run.outcomes).toEqual(model.outcomes);
      expect(run.store.read()).toEqual(model.state);
      expect(run.disk.durable).toEqual(model.state);
      expect(run.disk.overlapped).toBe(false);
    }), { numRuns: 300 });
  });

  it('with failing writes: what resolved is what one by one gives for the resolved calls alone, and nothing else is durable', async () => {
    await fc.assert(fc.asyncProperty(fc.array(stepArb(true), { maxLength: 60 }), async (steps) => {
      const run = await play(steps);
      const resolved = run.ops.filter((_, i) => run.outcomes[i] !== undefined && 'ok' in run.outcomes[i]!);
      const model = sequential(resolved);
      expect(run.outcomes.filter((o) => o !== undefined && 'ok' in o)).toEqual(model.outcomes);
      expect(run.store.read()).toEqual(model.state);
      expect(run.disk.durable).toEqual(model.state);
      for (const o of run.outcomes) expect(o).toBeDefined();
    }), { numRuns: 300 });
  });
});

describe('batches', () => {
  it('persists updates called in one tick with one write, and those called during it with one more', async () => {
    const disk = new FakeDisk();
    const store = new GroupCommitStore<S>(initial(), { persist: disk.persist });
    const first = Array.from({ length: 20 }, (_, i) => store.update((d) => { d.items.push(i); return i; }));
    await settle();
    expect(disk.writes).toBe(1);
    const second = Array.from({ length: 30 }, (_, i) => store.update((d) => { d.items.push(100 + i); return d.items.length; }));
    await settle();
    expect(disk.writes).toBe(1);
    expect(store.read().items).toEqual([]);
    disk.complete(true);
    expect(await Promise.all(first)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await settle();
    expect(disk.writes).toBe(2);
    expect(disk.inFlight[0]!.next.items).toHaveLength(50);
    disk.complete(true);
    expect(await Promise.all(second)).toEqual(Array.from({ length: 30 }, (_, i) => 21 + i));
    expect(store.read().items).toHaveLength(50);
  });

  it('drops the partial changes of a mutate that throws and commits the rest of its batch', async () => {
    const disk = new FakeDisk();
    const store = new GroupCommitStore<S>(initial(), { persist: disk.persist });
    const a = store.update((d) => { d.items.push(1); return 'a'; });
    const b = store.update((d) => { d.items.push(2); d.rec.partial = 1; throw new Refused('b'); });
    const c = store.update((d) => { d.items.push(3); return d.items.slice(); });
    await settle();
    disk.complete(true);
    expect(await a).toBe('a');
    await expect(b).rejects.toThrow('b');
    expect(await c).toEqual([1, 3]);
    expect(store.read()).toEqual({ n: 0, items: [1, 3], rec: {} });
    expect(disk.writes).toBe(1);
  });

  it('rejects every caller of a failed write with its error, keeps the last durable state and writes the next batch', async () => {
    const disk = new FakeDisk();
    const store = new GroupCommitStore<S>(initial(), { persist: disk.persist });
    const batch = [1, 2, 3].map((v) => store.update((d) => { d.items.push(v); }));
    await settle();
    disk.complete(false);
    for (const p of batch) await expect(p).rejects.toThrow('disk full');
    expect(store.read()).toEqual(initial());
    const next = store.update((d) => { d.items.push(4); return d.items.slice(); });
    await settle();
    disk.complete(true);
    expect(await next).toEqual([4]);
  });

  it('queues a burst without a bound: 5,000 updates during one write all commit, in call order, with one more write', async () => {
    const disk = new FakeDisk();
    const store = new GroupCommitStore<S>(initial(), { persist: disk.persist });
    const head = store.update((d) => { d.n = -1; });
    await settle();
    const burst = Array.from({ length: 5000 }, (_, i) => store.update((d) => { d.items.push(i); }));
    disk.complete(true);
    await head;
    await settle();
    disk.complete(true);
    await Promise.all(burst);
    expect(disk.writes).toBe(2);
    expect(store.read().items).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});
