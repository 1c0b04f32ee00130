/** The seed sweep shared by the two simulation test files: chunks of seeds, each its own test. */
import { expect, it } from 'vitest';
import { runSeed, type SeedResult } from '../../sim/runSeed.js';

/** Seeds per test: a chunk stays well inside the per-test timeout on a busy two-core machine. */
export const CHUNK = 40;

export function failures(r: SeedResult): string[] {
  return r.violations.map((v) => `seed ${r.seed}: ${v.invariant}: ${v.detail} (step ${v.step}, t+${v.atMs} ms; replay: npm run sim -- --seed ${r.seed} --trace)`);
}

/** `chunks` tests of CHUNK seeds from `from`: every invariant holds and the migration machines are exercised. */
export function sweepChunks(from: number, chunks: number): void {
  for (let c = 0; c < chunks; c++) {
    const first = from + c * CHUNK;
    it(`holds every invariant for seeds ${first}..${first + CHUNK - 1}, and exercises the migration machines`, async () => {
      const found: string[] = [];
      const states = new Set<string>();
      for (let seed = first; seed < first + CHUNK; seed++) {
        const r = await runSeed(seed);
        found.push(...failures(r));
        for (const k of Object.keys(r.coverage)) if (!k.includes(' -> ')) states.add(k);
      }
      expect(found).toEqual([]);
      for (const s of ['item completed', 'item rolled-back', 'item cancelled', 'nc-source cleaning', 'nc-incoming ready', 'node disabled']) expect(states).toContain(s);
      // Host HA runs in most seeds: hosts go suspect, get checked, and some are fenced.
      for (const s of ['host-ha AVAILABLE', 'host-ha SUSPECT', 'host-ha CHECKING', 'host-ha FENCED']) expect(states).toContain(s);
    }, 120_000);
  }
}
