/** EC2 paging's pure core: tokens (every way one is refused) and pages, table-driven and by property. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareViews, type InstanceView } from '../../clc/core/instanceView.js';
import { INSTANCE_PAGE_ORDER, TAG_PAGE_ORDER } from '../../clc/core/pageOrders.js';
import {
  canonicalFilters, issuePageToken, MAX_PAGE_SIZE, MIN_PAGE_SIZE, PAGE_TOKEN_LIFETIME_MS, readPageToken, sealPageToken, selectionDigest, takePage,
  type Page, type PageOrder, type PageScope, type TokenReading,
} from '../../clc/core/paging.js';

const KEY = Buffer.alloc(32, 7);
const OTHER_KEY = Buffer.alloc(32, 8);
const T0 = Date.UTC(2013, 5, 1, 12, 0, 0);
const SCOPE: PageScope = { action: 'DescribeInstances', selection: selectionDigest({ ids: [], filters: [] }) };

/** Numbers in their natural order, as a minimal PageOrder. */
const NUMBERS: PageOrder<number, number> = {
  keyOf: (n) => n,
  compare: (a, b) => a - b,
  writeKey: (k) => k,
  readKey: (j) => (typeof j === 'number' ? j : undefined),
};

const read = (token: string, scope = SCOPE, now = T0, key: Uint8Array = KEY): TokenReading<number> =>
  readPageToken(key, token, scope, NUMBERS.readKey, now);

function reason(r: TokenReading<unknown>): string {
  return r.ok ? 'accepted' : r.reason;
}

describe('page tokens', () => {
  const good = issuePageToken(KEY, SCOPE, 42, T0);
  const body = (over: Record<string, unknown>) => JSON.stringify({ v: 1, a: SCOPE.action, s: SCOPE.selection, c: 42, t: T0, ...over });
  const lastChar = good.slice(-1);
  // The signature's last base64url character carries 2 unused bits: flipping one decodes to the same bytes.
  const strayBits = good.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.charAt(
    ('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(lastChar) ^ 1));

  it('a token reads back to its cursor, in its scope, for 24 hours', () => {
    expect(read(good)).toEqual({ ok: true, cursor: 42 });
    expect(read(good, SCOPE, T0 + PAGE_TOKEN_LIFETIME_MS)).toEqual({ ok: true, cursor: 42 });
  });

  const rows: [string, string, PageScope, number, Uint8Array, RegExp][] = [
    ['empty', '', SCOPE, T0, KEY, /not a token/],
    ['not base64url', 'a+b/c=.xyz', SCOPE, T0, KEY, /not a token/],
    ['no signature', good.split('.')[0] as string, SCOPE, T0, KEY, /not a token/],
    ['a signature of the wrong length', `${good}A`, SCOPE, T0, KEY, /not a token/],
    ['payload altered', `x${good}`, SCOPE, T0, KEY, /altered/],
    ['signed with another key (another cloud, or a lost clc.json)', good, SCOPE, T0, OTHER_KEY, /altered/],
    ['stray bits in the signature', strayBits, SCOPE, T0, KEY, /altered/],
    ['signed, but not JSON', sealPageToken(KEY, 'not json'), SCOPE, T0, KEY, /not readable/],
    ['signed, but a JSON array', sealPageToken(KEY, '[1,2]'), SCOPE, T0, KEY, /not readable/],
    ['another version', sealPageToken(KEY, body({ v: 2 })), SCOPE, T0, KEY, /version 2/],
    ['no version', sealPageToken(KEY, body({ v: undefined })), SCOPE, T0, KEY, /version/],
    ['another action', good, { ...SCOPE, action: 'DescribeTags' }, T0, KEY, /issued for DescribeInstances, not DescribeTags/],
    ['other filters', good, { ...SCOPE, selection: selectionDigest({ ids: [], filters: [['node', ['x']]] }) }, T0, KEY, /other filters/],
    ['expired', good, SCOPE, T0 + PAGE_TOKEN_LIFETIME_MS + 1, KEY, /expired: issued 2013-06-01T12:00:00.000Z/],
    ['an issue time that is not a number', sealPageToken(KEY, body({ t: 'yesterday' })), SCOPE, T0, KEY, /not readable/],
    ['an issue time out of any date range', sealPageToken(KEY, body({ t: -1e300 })), SCOPE, T0, KEY, /expired: issued -1e\+300/],
    ['a cursor of the wrong shape', sealPageToken(KEY, body({ c: 'x' })), SCOPE, T0, KEY, /not readable/],
  ];
  it.each(rows)('refuses %s', (_n, token, scope, now, key, why) => {
    expect(reason(read(token, scope, now, key))).toMatch(why);
  });

  it('binds the selection, not the order it was written in', () => {
    const a = canonicalFilters([{ name: 'node', values: ['b', 'a', 'a'] }, { name: 'instance-state-name', values: ['running'] }]);
    const b = canonicalFilters([{ name: 'instance-state-name', values: ['running'] }, { name: 'node', values: ['a', 'b'] }]);
    expect(selectionDigest(a)).toBe(selectionDigest(b));
    expect(selectionDigest(a)).not.toBe(selectionDigest(canonicalFilters([{ name: 'node', values: ['a'] }])));
    // Two filters of one name are AND-ed: not the same as one filter with both values.
    expect(selectionDigest(canonicalFilters([{ name: 'node', values: ['a'] }, { name: 'node', values: ['b'] }])))
      .not.toBe(selectionDigest(canonicalFilters([{ name: 'node', values: ['a', 'b'] }])));
  });

  it('any change to a token\'s characters is refused', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+/= ';
    const edit = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), c: fc.constantFrom(...alphabet) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), c: fc.constantFrom(...alphabet) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), c: fc.constant('') }),
    );
    fc.assert(fc.property(fc.integer(), fc.array(edit, { minLength: 1, maxLength: 3 }), (cursor, edits) => {
      const token = issuePageToken(KEY, SCOPE, cursor, T0);
      let t = token;
      for (const e of edits) {
        const at = e.at % (t.length + 1);
        t = e.kind === 'replace' ? t.slice(0, at) + e.c + t.slice(at + 1) : e.kind === 'insert' ? t.slice(0, at) + e.c + t.slice(at) : t.slice(0, at) + t.slice(at + 1);
      }
      fc.pre(t !== token);
      expect(read(t).ok).toBe(false);
    }), { numRuns: 2000 });
  });

  it('any string reads as a cursor or a refusal with a reason, never a throw', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.base64String().map((s) => `${s.replace(/=+$/, '')}.${'A'.repeat(43)}`)), (s) => {
      const r = read(s);
      expect(r.ok ? typeof r.cursor : r.reason.length > 0).toBeTruthy();
    }), { numRuns: 2000 });
  });
});

describe('takePage', () => {
  const list = [10, 20, 30, 40, 50, 60, 70];
  const rows: [string, number[], number | undefined, number | undefined, number[], number | undefined][] = [
    ['the first page', list, undefined, 5, [10, 20, 30, 40, 50], 50],
    ['the rest, fewer than a page: no next', list, 50, 5, [60, 70], undefined],
    ['exactly a page left: no next', list.slice(0, 5), undefined, 5, [10, 20, 30, 40, 50], undefined],
    ['without a size: everything after the cursor', list, 20, undefined, [30, 40, 50, 60, 70], undefined],
    ['a cursor between items (its item is gone)', list, 35, 5, [40, 50, 60, 70], undefined],
    ['a cursor before every item', list, 0, 2, [10, 20], 20],
    ['a cursor past the end: an empty page', list, 99, 5, [], undefined],
    ['an empty list', [], undefined, 5, [], undefined],
  ];
  it.each(rows)('%s', (_n, sorted, after, max, items, next) => {
    const page = takePage(sorted, NUMBERS, after, max);
    expect(page.items).toEqual(items);
    expect(page.next).toBe(next);
  });
});

/** Distinct instances with few launch times and reservations, so the order's every tie-break is used. */
const viewList = fc.uniqueArray(
  fc.record({ t: fc.integer({ min: 0, max: 20 }), r: fc.integer({ min: 0, max: 30 }), i: fc.integer({ min: 0, max: 3 }), id: fc.integer({ min: 0, max: 0xffff }) }),
  { selector: (x) => x.id, maxLength: 2500 },
).map((xs) => xs.map(viewOf).sort(compareViews));

function viewOf(x: { t: number; r: number; i: number; id: number }): InstanceView {
  return {
    instanceId: `i-${x.id.toString(16).padStart(8, '0')}`, reservationId: `r-${x.r.toString(16).padStart(8, '0')}`, ownerId: '000000000000',
    imageId: 'emi-00000001', instanceType: 'm1.small', state: 'running', partition: 'cluster01', host: '127.0.12.11',
    launchTime: x.t, launchIndex: x.i, migration: { state: 'none' }, reported: true,
  };
}

/** Walks every page the way a client does: each NextToken read back from its text. */
function walk<T, K>(pageOf: (after: K | undefined) => Page<T, K>, order: PageOrder<T, K>): T[][] {
  const pages: T[][] = [];
  let token: string | undefined;
  for (;;) {
    let after: K | undefined;
    if (token !== undefined) {
      const r = readPageToken(KEY, token, SCOPE, order.readKey, T0);
      if (!r.ok) throw new Error(r.reason);
      after = r.cursor;
    }
    const page = pageOf(after);
    pages.push([...page.items]);
    if (page.next === undefined) return pages;
    token = issuePageToken(KEY, SCOPE, order.writeKey(page.next), T0);
  }
}

const pageSize = fc.integer({ min: MIN_PAGE_SIZE, max: MAX_PAGE_SIZE });

describe('walking pages', () => {
  it('yields every item exactly once, in order, whatever MaxResults', () => {
    fc.assert(fc.property(viewList, pageSize, (views, size) => {
      const pages = walk((after) => takePage(views, INSTANCE_PAGE_ORDER, after, size), INSTANCE_PAGE_ORDER);
      expect(pages.flat().map((v) => v.instanceId)).toEqual(views.map((v) => v.instanceId));
      expect(pages.length).toBe(Math.max(1, Math.ceil(views.length / size)));
      for (const p of pages.slice(0, -1)) expect(p).toHaveLength(size);
    }), { numRuns: 150 });
  });

  it('with instances launched and terminated between pages, none repeats and none that stays is skipped', () => {
    const churn = fc.array(fc.record({ add: viewList, removeEvery: fc.integer({ min: 2, max: 9 }) }), { maxLength: 10 });
    fc.assert(fc.property(viewList, pageSize, churn, (initial, size, changes) => {
      let current = initial;
      const removed = new Set<string>();
      let step = 0;
      const pages = walk((after) => {
        const change = changes[step++];
        if (change && after !== undefined) {
          // Between two pages: some instances disappear, others appear anywhere in the order.
          const kept = current.filter((v, i) => i % change.removeEvery !== 0 || removed.has(v.instanceId));
          for (const v of current) if (!kept.includes(v)) removed.add(v.instanceId);
          const known = new Set(kept.map((v) => v.instanceId));
          current = [...kept, ...change.add.filter((v) => !known.has(v.instanceId) && !removed.has(v.instanceId))].sort(compareViews);
        }
        return takePage(current, INSTANCE_PAGE_ORDER, after, size);
      }, INSTANCE_PAGE_ORDER);
      const seen = pages.flat().map((v) => v.instanceId);
      expect(new Set(seen).size).toBe(seen.length);
      const stayed = initial.filter((v) => !removed.has(v.instanceId)).map((v) => v.instanceId);
      expect(stayed.filter((id) => !seen.includes(id))).toEqual([]);
      const served = pages.flat();
      for (let i = 1; i < served.length; i++) expect(compareViews(served[i - 1] as InstanceView, served[i] as InstanceView)).toBeLessThan(0);
    }), { numRuns: 100 });
  });

  it('tags page in (resource id, key) order the same way', () => {
    const tags = fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.constantFrom('euca:node', 'euca:node:migration:source', 'euca:node:migration:destination')),
      { selector: ([r, k]) => `${r} ${k}`, maxLength: 300 })
      .map((xs) => xs.map(([r, k]) => ({ resourceId: `i-${r.toString(16).padStart(8, '0')}`, resourceType: 'instance' as const, key: k, value: 'v' }))
        .sort((a, b) => TAG_PAGE_ORDER.compare(a, b)));
    fc.assert(fc.property(tags, pageSize, (sorted, size) => {
      const pages = walk((after) => takePage(sorted, TAG_PAGE_ORDER, after, size), TAG_PAGE_ORDER);
      expect(pages.flat()).toEqual(sorted);
    }), { numRuns: 100 });
  });
});
