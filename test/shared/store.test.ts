import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTempOf, writeFileDurable } from '../../shared/store/durableFile.js';
import { openFileStore, openMemoryStore, type StoreOptions } from '../../shared/store/store.js';
import { canMountSmallDisk, mountSmallDisk, type SmallDisk } from '../helpers/fullDisk.js';

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

describe('temp files of durable writes', () => {
  it.each([
    ['.s.json.1234.deadbeef.tmp', true],
    ['.s.json.1.00000000.tmp', true],
    ['.s.json.1234.deadbee.tmp', false],
    ['.s.json.x.deadbeef.tmp', false],
    ['.t.json.1234.deadbeef.tmp', false],
    ['.sXjson.1234.deadbeef.tmp', false],
    ['s.json', false],
    ['.s.json.1234.deadbeef.tmp.keep', false],
  ])('%s is a temp file of s.json: %s', (name, yes) => {
    expect(isTempOf('/x/s.json', name)).toBe(yes);
  });

  it("removes this store's leftover temp files when it opens, and nothing else", async () => {
    const file = join(dir, 's.json');
    await openFileStore(file, opts);
    const leftovers = ['.s.json.4242.0badc0de.tmp', '.s.json.17.00112233.tmp'];
    const others = ['.t.json.4242.0badc0de.tmp', 's.json.bak', '.s.json.tmp'];
    for (const n of [...leftovers, ...others]) await writeFile(join(dir, n), 'half a write');
    const removed: string[][] = [];
    const s = await openFileStore(file, opts, { onLeftoverTemps: (names) => removed.push([...names]) });
    expect(removed).toEqual([[...leftovers].sort()]);
    expect((await readdir(dir)).sort()).toEqual([...others, 's.json'].sort());
    expect(s.read()).toEqual({ n: 0, items: [] });
  });

  it('leaves no temp file when the rename fails', async () => {
    const target = join(dir, 'is-a-dir');
    await mkdir(join(target, 'inside'), { recursive: true });
    await expect(writeFileDurable(target, 'x')).rejects.toMatchObject({ code: expect.stringMatching(/EISDIR|ENOTEMPTY|EEXIST/) });
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

// A real full disk (a small tmpfs; root only, as in CI), not an injected failure.
describe.skipIf(!canMountSmallDisk())('a durable write on a full disk', () => {
  let disk: SmallDisk;
  beforeEach(() => { disk = mountSmallDisk(join(dir, 'disk'), 64); });
  afterEach(() => { disk.unmount(); });

  it('fails with StoreWriteFailed (ENOSPC), keeps the old snapshot and leaves no temp file, however often it is tried', async () => {
    const file = join(disk.path, 's.json');
    const s = await openFileStore(file, opts);
    await s.update((d) => { d.n = 1; });
    expect(disk.fill()).toBeGreaterThan(0);
    const big = 'x'.repeat(8192);
    for (let i = 0; i < 20; i++) {
      await expect(s.update((d) => { d.items.push(big); })).rejects.toMatchObject({ code: 'StoreWriteFailed', message: expect.stringContaining('ENOSPC') });
    }
    expect((await readdir(disk.path)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(s.read()).toEqual({ n: 1, items: [] });
    expect(JSON.parse(await readFile(file, 'utf8')).data).toEqual({ n: 1, items: [] });
    disk.free();
    await s.update((d) => { d.n = 2; });
    expect((await openFileStore(file, opts)).read().n).toBe(2);
  });
});
