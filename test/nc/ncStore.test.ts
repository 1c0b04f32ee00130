import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ncStorePath, openNcStore } from '../../nc/ncStore.js';
import { record } from './fixtures.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-ncstore-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('nc.json', () => {
  it('starts enabled and empty, and round-trips plain JSON through a reopen', async () => {
    const s = await openNcStore(dir);
    expect(s.read()).toEqual({ nodeState: 'enabled', instances: {} });
    const rec = record('i-00000001', 'shutting-down', { terminatedFrom: 'running', since: 42 });
    await s.update((d) => { d.nodeState = 'disabled'; d.instances[rec.instanceId] = rec; });
    const raw = JSON.parse(await readFile(ncStorePath(dir), 'utf8'));
    expect(raw).toMatchObject({ kind: 'ferry-nc', schemaVersion: 1, data: { nodeState: 'disabled' } });
    expect((await openNcStore(dir)).read()).toEqual({ nodeState: 'disabled', instances: { [rec.instanceId]: rec } });
  });

  it.each([
    ['a record filed under another id', { nodeState: 'enabled', instances: { 'i-00000002': record('i-00000001', 'running') } }],
    ['an unknown phase', { nodeState: 'enabled', instances: { 'i-00000001': { ...record('i-00000001', 'running'), phase: 'zombie' } } }],
    ['a missing node state', { instances: {} }],
  ])('refuses %s as StoreInvalid', async (_n, data) => {
    await writeFile(ncStorePath(dir), JSON.stringify({ schemaVersion: 1, kind: 'ferry-nc', data }));
    await expect(openNcStore(dir)).rejects.toMatchObject({ code: 'StoreInvalid' });
  });
});
