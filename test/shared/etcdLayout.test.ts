/** The etcd key layout of a store's document (shared/store/etcdLayout.ts): round trips, diffs and limits, by property and by example. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeDocument, diffKeys, encodeDocument, overLimit, paddedKey, type EtcdLayout } from '../../shared/store/etcdLayout.js';

const LAYOUT: EtcdLayout = {
  collections: {
    items: { kind: 'record' },
    log: { kind: 'list', keyOf: (e: unknown) => paddedKey((e as { seq: number }).seq) },
    slots: { kind: 'list', keyOf: (_e: unknown, i: number) => paddedKey(i) },
  },
};

const json = fc.jsonValue();
/** Any key at all, `__proto__`, '/', '%' and the empty string included. */
const anyKey = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'a/b', '%2F', ''));

const docArb = fc.record({
  plain: json,
  name: fc.string(),
  items: fc.dictionary(anyKey, json),
  log: fc.uniqueArray(fc.nat({ max: 1e9 }), { maxLength: 20 }).map((seqs) => seqs.sort((a, b) => a - b).map((seq) => ({ seq, text: String(seq) }))),
  slots: fc.array(json, { maxLength: 12 }),
}, { requiredKeys: ['items', 'log', 'slots'] });

/** What a document is after JSON (undefined dropped, -0 as 0): what any store gives back. */
const viaJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('etcd layout', () => {
  it('decode(encode(doc)) is the document, for any keys and values', () => {
    fc.assert(fc.property(docArb, (doc) => {
      expect(decodeDocument(encodeDocument(doc, LAYOUT))).toEqual(viaJson(doc));
    }), { numRuns: 300 });
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

  it('one changed entry of a collection is one key; an empty collection reads back empty, not absent', () => {
    const doc = { items: { a: 1, b: 2 }, log: [{ seq: 1 }, { seq: 2 }], slots: [] };
    const before = encodeDocument(doc, LAYOUT);
    const after = encodeDocument({ ...doc, items: { a: 1, b: 3 }, log: [{ seq: 2 }, { seq: 3 }] }, LAYOUT);
    const d = diffKeys(before, after);
    expect(d.puts.map(([k]) => k)).toEqual(['c/items/b', `c/log/${paddedKey(3)}`]);
    expect(d.deletes).toEqual([`c/log/${paddedKey(1)}`]);
    expect(decodeDocument(encodeDocument({ items: {}, log: [], slots: [] }, LAYOUT))).toEqual({ items: {}, log: [], slots: [] });
  });

  it('a list with two items of one key is refused before anything is sent', () => {
    expect(() => encodeDocument({ log: [{ seq: 1 }, { seq: 1 }] }, LAYOUT)).toThrow(/two items with key/);
  });

  it('overLimit names the operation count or the size, and passes what fits', () => {
    const limits = { maxRequestBytes: 10_000, maxTxnOps: 10 };
    expect(overLimit({ puts: [['k', 'v']], deletes: [] }, 'p/', limits)).toBeUndefined();
    expect(overLimit({ puts: Array.from({ length: 8 }, (_, i) => [`k${i}`, 'v'] as const), deletes: [] }, 'p/', limits)?.limit).toMatch(/--max-txn-ops/);
    expect(overLimit({ puts: [['k', 'x'.repeat(10_000)]], deletes: [] }, 'p/', limits)?.limit).toMatch(/--max-request-bytes/);
  });
});
