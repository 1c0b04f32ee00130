/** The NextToken key in clc.json (clc/state/pagingKey.ts): made once, kept across restarts, old files load. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLC_STORE_FILE, openClcStore, openMemoryClcStore } from '../../clc/state/clcStore.js';
import { ensurePagingKey, pagingKeyOf } from '../../clc/state/pagingKey.js';
import { isFerryError } from '../../shared/errors/registry.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-paging-key-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('the paging key', () => {
  it('a clc.json written before paging loads, without a key, and gets one persisted at start', async () => {
    await writeFile(join(dir, CLC_STORE_FILE), JSON.stringify({
      schemaVersion: 1, kind: 'ferry-clc', data: { vmTypes: [{ name: 't1.micro', cores: 1, memoryMiB: 256, diskGiB: 5 }], instances: {} },
    }));
    const s = await openClcStore(dir);
    expect(pagingKeyOf(s.read())).toBeUndefined();
    const key = await ensurePagingKey(s);
    expect(key).toHaveLength(32);
    const raw = JSON.parse(await readFile(join(dir, CLC_STORE_FILE), 'utf8'));
    expect(raw.data.pagingKey).toBe(key.toString('hex'));
    // A restart reads the same key and makes no other.
    const again = await openClcStore(dir);
    expect(await ensurePagingKey(again, () => Buffer.alloc(32, 1))).toEqual(key);
  });

  it('concurrent first uses agree on one key', async () => {
    const s = await openMemoryClcStore();
    let n = 0;
    const random = (len: number) => Buffer.alloc(len, ++n);
    const keys = await Promise.all([ensurePagingKey(s, random), ensurePagingKey(s, random), ensurePagingKey(s, random)]);
    expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(1);
    expect(s.read().pagingKey).toBe(keys[0]?.toString('hex'));
  });

  it('a clc.json with a malformed key is refused at start, naming the file', async () => {
    await writeFile(join(dir, CLC_STORE_FILE), JSON.stringify({
      schemaVersion: 1, kind: 'ferry-clc', data: { vmTypes: [{ name: 't1.micro', cores: 1, memoryMiB: 256, diskGiB: 5 }], instances: {}, pagingKey: 'short' },
    }));
    await expect(openClcStore(dir)).rejects.toSatisfy((e: unknown) => isFerryError(e) && e.code === 'StoreInvalid' && e.message.includes(CLC_STORE_FILE));
  });
});
