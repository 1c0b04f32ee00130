import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isTempOf, writeFileDurable } from '../../shared/store/durableFile.js';
import { openFileStore, openMemoryStore, type StoreOptions } from '../../shared/store/store.js';
import { canMountSmallDisk, mountSmallDisk, type SmallDisk } from '../helpers/fullDisk.js';
import { builtEntry } from '../helpers/spawnDaemon.js';

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

  it('writes compact JSON', async () => {
    const file = join(dir, 's.json');
    const s = await openFileStore(file, opts);
    await s.update((d) => { d.items.push('a', 'b'); });
    const text = await readFile(file, 'utf8');
    expect(text).toBe(JSON.stringify({ schemaVersion: 1, kind: 'ferry-test', data: { n: 0, items: ['a', 'b'] } }));
  });

  it('group-commits: a burst called in one tick is one durable write, its callers resolved once it is on disk', async () => {
    const file = join(dir, 's.json');
    const s = await openFileStore(file, opts);
    const writes: string[] = [];
    const onWrite = (m: unknown): void => { writes.push((m as { kind: string }).kind); };
    subscribe('ferry.store.write', onWrite);
    try {
      const seen = await Promise.all(Array.from({ length: 50 }, (_, i) => s.update((d) => { d.items.push(String(i)); return d.items.length; }).then(async (len) => {
        // Resolved only once durable: the file already holds this update (and what came before it).
        const onDisk = JSON.parse(await readFile(file, 'utf8')) as { data: Data };
        return { len, has: onDisk.data.items.includes(String(i)) };
      })));
      expect(seen.map((x) => x.len)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(seen.every((x) => x.has)).toBe(true);
      expect(writes.filter((k) => k === 'ferry-test')).toHaveLength(1);
    } finally {
      unsubscribe('ferry.store.write', onWrite);
    }
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

/**
 * A writer killed (SIGKILL) in the middle of bursts of group-committed updates, some of them throwing
 * after a partial change: what is on disk is always the sequential result of a prefix of the updates
 * that includes every one acknowledged before the kill, never a partial change, never a torn file.
 */
describe('crash consistency', () => {
  const WRITER = `
    const [,, storeJs, file, startAt] = process.argv;
    const { openFileStore } = await import(storeJs);
    const s = await openFileStore(file, { kind: 'ferry-test', schemaVersion: 1, initial: () => ({ n: 0, items: [] }) });
    let k = Number(startAt);
    for (;;) {
      await Promise.all(Array.from({ length: 12 }, () => {
        const i = k++;
        return s.update((d) => {
          d.items.push(String(i));
          if (i % 7 === 3) throw new Error('refused after a partial change');
          d.n = i;
        }).then(() => process.stdout.write('ack ' + i + '\\n'), () => undefined);
      }));
    }
  `;
  const expected = (upTo: number): string[] => Array.from({ length: upTo }, (_, i) => i).filter((i) => i % 7 !== 3).map(String);

  it('keeps a prefix holding every acknowledged update across kills at random moments', async () => {
    const file = join(dir, 's.json');
    const script = join(dir, 'writer.mjs');
    await writeFile(script, WRITER);
    const storeJs = pathToFileURL(builtEntry('shared/store/store.ts')).href;
    let next = 0;
    for (const killAfter of [5, 40, 17, 90, 61]) {
      const child = spawn(process.execPath, [script, storeJs, file, String(next)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      let acked = -1;
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const acks = [...out.matchAll(/ack (\d+)\n/g)].map((m) => Number(m[1]));
          if (acks.filter((i) => i >= next).length >= killAfter) {
            acked = Math.max(...acks);
            child.kill('SIGKILL');
            resolve();
          }
        });
        void exited.then(() => reject(new Error(`writer exited before ${killAfter} acks: ${err}`)));
      });
      await exited;
      const s = await openFileStore(file, opts);
      const items = s.read().items;
      const last = Number(items.at(-1));
      expect(items).toEqual(expected(last + 1));
      expect(last).toBeGreaterThanOrEqual(acked);
      expect(s.read().n).toBe(last);
      next = last + 1;
    }
  }, 120_000);
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
