/** The etcd key layout of a store's document (shared/store/etcdLayout.ts): round trips, diffs and migrations, by property and by example. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeDocument, diffKeys, encodeDocument, paddedKey, reconcileWithStored, type EtcdLayout } from '../../shared/store/etcdLayout.js';

const LAYOUT: EtcdLayout = {
  collections: {
    items: { kind: 'record' },
    log: { kind: 'list', keyOf: (e: unknown) => paddedKey((e as { seq: number }).seq) },
    slots: { kind: 'list', keyOf: (_e: unknown, i: number) => paddedKey(i), independent: true, detached: ['seen'] },
    // Nested: the section's own key holds the rest; `a.b` and `x/y` are field names, not paths.
    ha: { kind: 'object', fields: {
      hosts: { kind: 'record', independent: true },
      'a.b': { kind: 'record' },
      deeper: { kind: 'object', fields: { 'x/y': { kind: 'record', detached: ['at', '__proto__'] } } },
    } },
  },
};

const json = fc.jsonValue();
/** Any key at all, `__proto__`, '/', '.', '%' and the empty string included. */
const anyKey = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'a/b', 'a.b', '%2F', ''));
const entryWithProps = fc.record({ at: fc.integer(), n: json, __proto__: fc.string() }, { requiredKeys: [] });

const docArb = fc.record({
  plain: json,
  name: fc.string(),
  items: fc.dictionary(anyKey, json),
  log: fc.uniqueArray(fc.nat({ max: 1e9 }), { maxLength: 20 }).map((seqs) => seqs.sort((a, b) => a - b).map((seq) => ({ seq, text: String(seq) }))),
  slots: fc.array(fc.oneof(json, fc.record({ seen: fc.integer(), host: fc.string() }, { requiredKeys: ['host'] })), { maxLength: 12 }),
  ha: fc.oneof(
    fc.record({
      global: json,
      hosts: fc.dictionary(anyKey, json),
      'a.b': fc.dictionary(anyKey, json),
      deeper: fc.oneof(fc.record({ 'x/y': fc.dictionary(anyKey, entryWithProps), other: json }, { requiredKeys: [] }), json),
    }, { requiredKeys: [] }),
    json,
  ),
}, { requiredKeys: ['items', 'log', 'slots'] });

/** What a document is after JSON (undefined dropped, -0 as 0): what any store gives back. */
const viaJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('etcd layout', () => {
  it('decode(encode(doc)) is the document, for any keys and values, nested collections and detached properties included', () => {
    fc.assert(fc.property(docArb, (doc) => {
      expect(decodeDocument(encodeDocument(doc, LAYOUT), LAYOUT)).toEqual(viaJson(doc));
    }), { numRuns: 400 });
  });

  it('applying diffKeys(before, after) to before gives after', () => {
    fc.assert(fc.property(docArb, docArb, (a, b) => {
      const before = encodeDocument(a, LAYOUT);
      const after = encodeDocument(b, LAYOUT);
      const { puts, deletes } = diffKeys(before, after);
      const applied = new Map(before);
      for (const k of deletes) applied.delete(k);
      for (const [k, v] of puts) applied.set(k, v);
      expect(applied).toEqual(after);
    }), { numRuns: 300 });
  });

  it.each([
    ['a record entry', { items: { a: 1, b: 2 } }, { items: { a: 1, b: 3 } }, ['c/items/b'], []],
    ['a list item appended, the oldest dropped', { log: [{ seq: 1 }, { seq: 2 }] }, { log: [{ seq: 2 }, { seq: 3 }] }, [`c/log/${paddedKey(3)}`], [`c/log/${paddedKey(1)}`]],
    ['one host of a nested record', { ha: { g: 1, hosts: { h1: { s: 'A' }, h2: { s: 'A' } } } }, { ha: { g: 1, hosts: { h1: { s: 'A' }, h2: { s: 'B' } } } }, ['c/ha/hosts/h2'], []],
    ['the section around the hosts', { ha: { g: 1, hosts: { h1: {} } } }, { ha: { g: 2, hosts: { h1: {} } } }, ['f/ha'], []],
    ['a field named with a dot', { ha: { 'a.b': { k: 1 } } }, { ha: { 'a.b': { k: 2 } } }, ['c/ha/a.b/k'], []],
    ['a detached property of every item: one key', { slots: [{ host: 'x', seen: 1 }, { host: 'y', seen: 1 }] }, { slots: [{ host: 'x', seen: 2 }, { host: 'y', seen: 2 }] }, ['d/slots/seen'], []],
  ])('one change writes only its keys: %s', (_what, a, b, puts, deletes) => {
    const d = diffKeys(encodeDocument(a, LAYOUT), encodeDocument(b, LAYOUT));
    expect(d.puts.map(([k]) => k)).toEqual(puts);
    expect(d.deletes).toEqual(deletes);
  });

  it('an empty collection reads back empty, not absent, at any depth', () => {
    const doc = { items: {}, log: [], slots: [], ha: { hosts: {}, deeper: { 'x/y': {} } } };
    expect(decodeDocument(encodeDocument(doc, LAYOUT), LAYOUT)).toEqual(doc);
  });

  it('keys percent-encode every segment: a field named `x/y` is one segment, `a.b` is not split', () => {
    const keys = [...encodeDocument({ ha: { 'a.b': { k: 1 }, deeper: { 'x/y': { 'e/f': { at: 1, n: 2 } } } } }, LAYOUT).keys()];
    expect(keys).toEqual(expect.arrayContaining(['c/ha/a.b/k', 'f/ha/deeper/x%2Fy', 'c/ha/deeper/x%2Fy/e%2Ff', 'd/ha/deeper/x%2Fy/at']));
  });

  it('a section written whole by an older layout (hosts inline, no f/ha/hosts) reads as it was', () => {
    const legacy = new Map([['f/ha', JSON.stringify({ g: 1, hosts: { h1: { s: 'A' } } })], ['f/items', '"record"'], ['c/items/a', '1']]);
    expect(decodeDocument(legacy, LAYOUT)).toEqual({ ha: { g: 1, hosts: { h1: { s: 'A' } } }, items: { a: 1 } });
    // Entries of a collection whose own key is not written yet (a move cut short) are not read.
    legacy.set('c/ha/hosts/h9', '{"s":"Z"}');
    expect(decodeDocument(legacy, LAYOUT)).toEqual({ ha: { g: 1, hosts: { h1: { s: 'A' } } }, items: { a: 1 } });
  });

  it('reconcileWithStored: the first write after an older layout moves the section\'s hosts out (over a move cut short), and rewrites nothing else', () => {
    const stored = new Map([
      // hosts inline, and two entries a move cut short left: h1 older than inline, h9 not in the document.
      ['f/ha', JSON.stringify({ g: 1, hosts: { h1: { s: 'A' } } })], ['c/ha/hosts/h1', '{"s":"stale"}'], ['c/ha/hosts/h9', '{"s":"Z"}'],
      // In key order other than this process's, and a key this build does not know: neither is touched.
      ['f/items', '"record"'], ['c/items/a', '{"y":1,"x":2}'], ['f/newer', '1'],
    ]);
    const data = { ha: { g: 1, hosts: { h1: { s: 'A' } } }, items: { a: { x: 2, y: 1 } } };
    const doc = reconcileWithStored(encodeDocument(data, LAYOUT), stored, LAYOUT);
    const d = diffKeys(doc, encodeDocument(data, LAYOUT));
    expect(d.puts.map(([k]) => k).sort()).toEqual(['c/ha/hosts/h1', 'f/ha', 'f/ha/hosts']);
    expect(d.deletes).toEqual(['c/ha/hosts/h9']);
    const applied = new Map(stored);
    for (const k of d.deletes) applied.delete(k);
    for (const [k, v] of d.puts) applied.set(k, v);
    expect(decodeDocument(applied, LAYOUT)).toEqual({ ...data, newer: 1 });
  });

  it('a detached property is read from its key over an older inline value, and entries without one keep theirs', () => {
    const kvs = new Map([['f/slots', '"list"'], [`c/slots/${paddedKey(0)}`, '{"host":"x","seen":1}'], [`c/slots/${paddedKey(1)}`, '{"host":"y","seen":1}'], ['d/slots/seen', JSON.stringify({ [paddedKey(0)]: 5 })]]);
    expect(decodeDocument(kvs, LAYOUT)).toEqual({ slots: [{ host: 'x', seen: 5 }, { host: 'y', seen: 1 }] });
  });

  it('a list with two items of one key is refused before anything is sent', () => {
    expect(() => encodeDocument({ log: [{ seq: 1 }, { seq: 1 }] }, LAYOUT)).toThrow(/two items with key/);
  });
});
