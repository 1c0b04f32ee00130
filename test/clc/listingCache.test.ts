import { describe, expect, it } from 'vitest';
import type { ClcCcRequest, ClcCcResponse } from '../../clc/clusters/ccContract.js';
import { ListingCache } from '../../clc/clusters/listingCache.js';

type Listing = ClcCcResponse<'ccDescribeInstances'>;
type Req = ClcCcRequest<'ccDescribeInstances'>;

const inst = (id: string) => ({
  instanceId: id, reservationId: 'r-00000001', ownerId: '000000000000', imageId: 'emi-00000001',
  vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, state: 'running' as const, hypervisorState: 'running' as const,
  launchTime: 1, migrationState: 'none' as const, host: '127.0.12.1', partition: 'cluster01',
});

/** A CC as cc/service.ts answers: versioned, `unchanged` to a caller holding the version. */
function cc(listing: () => { version?: string; ids: string[] }) {
  const asked: Req[] = [];
  const ask = (req: Req): Promise<Listing> => {
    asked.push(req);
    const now = listing();
    const full: Listing = { partition: 'cluster01', instances: now.ids.map(inst), complete: true, ...(now.version !== undefined ? { version: now.version } : {}) };
    if (now.version !== undefined && req.knownVersion === now.version) return Promise.resolve({ ...full, instances: [], unchanged: true });
    return Promise.resolve(full);
  };
  return { ask, asked };
}

describe('ListingCache', () => {
  it('asks with the version it holds and hands back the very same object while unchanged', async () => {
    let state = { version: 'b-1', ids: ['i-1'] };
    const { ask, asked } = cc(() => state);
    const cache = new ListingCache();
    const first = await cache.describe('cluster01', {}, ask);
    const second = await cache.describe('cluster01', {}, ask);
    expect(second).toBe(first);
    expect(asked).toEqual([{}, { knownVersion: 'b-1' }]);
    state = { version: 'b-2', ids: ['i-1', 'i-2'] };
    const third = await cache.describe('cluster01', {}, ask);
    expect(third.instances.map((i) => i.instanceId)).toEqual(['i-1', 'i-2']);
    expect(asked.at(-1)).toEqual({ knownVersion: 'b-1' });
    expect(await cache.describe('cluster01', {}, ask)).toBe(third);
  });

  it('keeps one copy per partition', async () => {
    const a = cc(() => ({ version: 'a-1', ids: ['i-1'] }));
    const b = cc(() => ({ version: 'b-1', ids: ['i-2'] }));
    const cache = new ListingCache();
    const fromA = await cache.describe('a', {}, a.ask);
    const fromB = await cache.describe('b', {}, b.ask);
    expect(await cache.describe('a', {}, a.ask)).toBe(fromA);
    expect(await cache.describe('b', {}, b.ask)).toBe(fromB);
  });

  it('asks an older CC (no versions) in full every time', async () => {
    const { ask, asked } = cc(() => ({ ids: ['i-1'] }));
    const cache = new ListingCache();
    const first = await cache.describe('cluster01', {}, ask);
    const second = await cache.describe('cluster01', {}, ask);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(asked).toEqual([{}, {}]);
  });

  it('an `unchanged` it cannot match (another version) is asked again in full, never answered empty', async () => {
    const answers: Listing[] = [
      { partition: 'cluster01', instances: [inst('i-1')], complete: true, version: 'v-1' },
      { partition: 'cluster01', instances: [], complete: true, version: 'v-9', unchanged: true },
      { partition: 'cluster01', instances: [inst('i-1'), inst('i-3')], complete: true, version: 'v-9' },
    ];
    const cache = new ListingCache();
    const ask = () => Promise.resolve(answers.shift() as Listing);
    await cache.describe('cluster01', {}, ask);
    const got = await cache.describe('cluster01', {}, ask);
    expect(got.instances.map((i) => i.instanceId)).toEqual(['i-1', 'i-3']);
    expect(got.unchanged).toBeUndefined();
  });

  it('a caller naming its own version gets the CC\'s answer as is', async () => {
    const { ask } = cc(() => ({ version: 'b-1', ids: ['i-1'] }));
    const r = await new ListingCache().describe('cluster01', { knownVersion: 'b-1' }, ask);
    expect(r.unchanged).toBe(true);
  });
});

describe('RenderCache', () => {
  it('reuses a rendering only for the same selection out of the very same sources', async () => {
    const { RenderCache } = await import('../../clc/api/render/reservationCache.js');
    const { RawXml } = await import('../../clc/api/xmlWriter.js');
    const cache = new RenderCache();
    const records = {};
    const answer = { instances: [] };
    let renders = 0;
    const render = () => new RawXml(`<item>${++renders}</item>`);
    const first = cache.get('all', [records, 'cluster01', answer], render);
    expect(cache.get('all', [records, 'cluster01', answer], render)).toBe(first);
    // Equal content in new objects (a CC answered in full, a record was written): rendered again.
    expect(cache.get('all', [records, 'cluster01', { instances: [] }], render).inner).toBe('<item>2</item>');
    expect(cache.get('all', [{}, 'cluster01', answer], render).inner).toBe('<item>3</item>');
    // Another selection never shares it.
    expect(cache.get('some', [{}, 'cluster01', answer], render).inner).toBe('<item>4</item>');
  });
});
