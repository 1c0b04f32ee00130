import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore, openMemoryStore, type StoreOptions } from '../../shared/store/store.js';

interface Data { n: number; items: string[] }
const opts: StoreOptions<Data> = { kind: 'ferry-test', schemaVersion: 1, initial: () => ({ n: 0, items: [] }) };

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-store-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('file store', () => {
  it('creates the file with its envelope and survives a reopen', async () => {
    const file = join(dir, 's.json');
    const s = await openFileStore(file, opts);
    await s.update((d) => { d.n = 7; d.items.push('a'); });
    const again = await openFileStore(file, opts);
    expect(again.read()).toEqual({ n: 7, items: ['a'] });
    const raw = JSON.parse(await readFile(file, 'utf8'));
    expect(raw).toMatchObject({ schemaVersion: 1, kind: 'ferry-test', data: { n: 7 } });
  });

  it('applies concurrent updates in call order and leaves no temp files', async () => {
    const file = join(dir, 's.json');
    const s = await openFileStore(file, opts);
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.update((d) => { d.items.push(String(i)); })));
    expect(s.read().items).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect((await openFileStore(file, opts)).read().items).toHaveLength(20);
  });

  it('returns what the mutator returns', async () => {
    const s = await openMemoryStore(opts);
    expect(await s.update((d) => { d.n += 2; return d.n; })).toBe(2);
  });

  it.each([
    ['corrupt JSON', '{"schemaVersion":1,', 'StoreCorrupt'],
    ['another kind', JSON.stringify({ schemaVersion: 1, kind: 'ferry-other', data: {} }), 'StoreSchemaMismatch'],
    ['a newer schema', JSON.stringify({ schemaVersion: 2, kind: 'ferry-test', data: {} }), 'StoreSchemaMismatch'],
  ])('refuses %s at open, never resetting it', async (_name, contents, code) => {
    const file = join(dir, 's.json');
    await writeFile(file, contents);
    await expect(openFileStore(file, opts)).rejects.toMatchObject({ code });
    expect(await readFile(file, 'utf8')).toBe(contents);
  });

  it('refuses data that fails validation', async () => {
    const file = join(dir, 's.json');
    await writeFile(file, JSON.stringify({ schemaVersion: 1, kind: 'ferry-test', data: { n: 'x' } }));
    const validate = (d: unknown): Data => {
      if (typeof (d as Data).n !== 'number') throw new Error('n must be a number');
      return d as Data;
    };
    await expect(openFileStore(file, { ...opts, validate })).rejects.toMatchObject({ code: 'StoreInvalid' });
  });

  it('keeps the old snapshot in memory when a write fails', async () => {
    const file = join(dir, 'sub', 's.json');
    const s = await openFileStore(file, opts);
    await rm(join(dir, 'sub'), { recursive: true });
    await expect(s.update((d) => { d.n = 99; })).rejects.toMatchObject({ code: 'StoreWriteFailed' });
    expect(s.read().n).toBe(0);
  });
});
