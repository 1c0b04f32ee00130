/** The simulator's own parts: the PRNG, the crash-aware store, the faulty network, the incarnation. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { Incarnation } from '../../sim/incarnation.js';
import { Prng } from '../../sim/prng.js';
import { SimDisk, openSimStore } from '../../sim/simDisk.js';
import { SimNetwork } from '../../sim/simNetwork.js';

const OPTS = { kind: 'test', schemaVersion: 1, initial: () => ({ n: 0 }) };

async function flush(): Promise<void> {
  await new Promise((r) => setImmediate(r));
}

async function outcome(p: Promise<unknown>, clock: ManualClock, ms: number): Promise<string> {
  let out = 'pending';
  p.then((v) => { out = `ok ${JSON.stringify(v)}`; }, (e: unknown) => { out = isFerryError(e) ? e.code : String(e); });
  for (let t = 0; t < ms; t += 10) {
    await flush();
    clock.advance(10);
  }
  await flush();
  return out;
}

describe('Prng', () => {
  it('repeats for a seed, differs between seeds and between named streams', () => {
    const draw = (r: Prng): number[] => Array.from({ length: 5 }, () => r.int(0, 1000));
    expect(draw(new Prng(1))).toEqual(draw(new Prng(1)));
    expect(draw(new Prng(1))).not.toEqual(draw(new Prng(2)));
    expect(draw(Prng.fork(1, 'net'))).not.toEqual(draw(Prng.fork(1, 'ids')));
    expect(new Prng(3).hex8()()).toMatch(/^[0-9a-f]{8}$/);
  });
});

describe('SimDisk store', () => {
  it('keeps acknowledged writes across a crash; a dead process never hears back', async () => {
    const clock = new ManualClock(0);
    const disk = new SimDisk();
    const life = new Incarnation('p', 1);
    const store = openSimStore({ disk, file: 'f', store: OPTS, life, clock: life.clock(clock), rng: new Prng(1), maxLatencyMs: 5 });
    expect(await outcome(store.update((d) => { d.n = 1; }), clock, 50)).toBe('ok undefined');
    const late = store.update((d) => { d.n = 2; });
    life.kill();
    expect(await outcome(late, clock, 50)).toBe('pending');
    const n = (disk.read('f') as { n: number }).n;
    expect([1, 2]).toContain(n); // in flight at the crash: landed or lost, never torn
    const next = new Incarnation('p', 2);
    const reopened = openSimStore({ disk, file: 'f', store: OPTS, life: next, clock: next.clock(clock), rng: new Prng(1), maxLatencyMs: 5 });
    expect(reopened.read()).toEqual({ n });
  });

  it('decides a write in flight at a crash by the seed, and both outcomes happen', async () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 20; seed++) {
      const clock = new ManualClock(0);
      const disk = new SimDisk();
      const life = new Incarnation('p', 1);
      const store = openSimStore({ disk, file: 'f', store: OPTS, life, clock: life.clock(clock), rng: new Prng(seed), maxLatencyMs: 5 });
      void store.update((d) => { d.n = 1; });
      await flush(); // the write has started and waits on its latency
      life.kill();
      await flush();
      seen.add((disk.read('f') as { n: number }).n);
    }
    expect([...seen].sort()).toEqual([0, 1]);
  });
});

describe('SimNetwork', () => {
  const handlers = { op: async (body: Record<string, unknown>) => ({ echo: body.x }) } as never;

  function setup(): { clock: ManualClock; net: SimNetwork; server: Incarnation; caller: Incarnation } {
    const clock = new ManualClock(0);
    const net = new SimNetwork(clock, new Prng(1), () => undefined);
    const server = new Incarnation('s', 1);
    net.serve('s', handlers, server);
    return { clock, net, server, caller: new Incarnation('c', 1) };
  }

  it('delivers and answers on the clock', async () => {
    const { clock, net, caller } = setup();
    const t = net.transport('c', caller, () => 's', 100);
    expect(await outcome(t.call('http://s', 'op', { x: 1 }), clock, 50)).toBe('ok {"echo":1}');
  });

  it('refuses when the server is down, times out across a partition', async () => {
    const { clock, net, server, caller } = setup();
    const t = net.transport('c', caller, () => 's', 100);
    net.partition('c', 's');
    expect(await outcome(t.call('http://s', 'op', { x: 1 }), clock, 200)).toBe('PeerTimeout');
    net.heal();
    server.kill();
    expect(await outcome(t.call('http://s', 'op', { x: 1 }), clock, 50)).toBe('PeerUnreachable');
  });

  it('a dead caller never sees its answer', async () => {
    const { clock, net, caller } = setup();
    const t = net.transport('c', caller, () => 's', 100);
    const p = t.call('http://s', 'op', { x: 1 });
    caller.kill();
    expect(await outcome(p, clock, 200)).toBe('pending');
  });
});
