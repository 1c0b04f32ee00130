/**
 * How an update is sent within etcd's limits (shared/store/etcdChunks.ts): what fits is one txn; what
 * does not is split only into entries of independent collections first and the rest last, every
 * prefix of the txns leaving a document that decodes and keeps each entry whole.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { overLimit, planWrites, type EtcdLimits } from '../../shared/store/etcdChunks.js';
import { decodeDocument, encodeDocument, paddedKey, type EtcdLayout, type KeyDiff } from '../../shared/store/etcdLayout.js';

const LAYOUT: EtcdLayout = {
  collections: {
    loose: { kind: 'record', independent: true },
    tied: { kind: 'record' },
    nodes: { kind: 'list', keyOf: (_n: unknown, i: number) => paddedKey(i), independent: true, detached: ['seen'] },
    ha: { kind: 'object', fields: { hosts: { kind: 'record', independent: true } } },
  },
};
/** 7 changes a txn (3 ops are the compares and the head), about 2,000 bytes of keys and values. */
const SMALL: EtcdLimits = { maxTxnOps: 10, maxRequestBytes: 4096 + 2000 };

function apply(kvs: Map<string, string>, chunk: KeyDiff): void {
  for (const k of chunk.deletes) kvs.delete(k);
  for (const [k, v] of chunk.puts) kvs.set(k, v);
}

function opsOf(chunk: KeyDiff): number {
  return chunk.puts.length + chunk.deletes.length;
}

const records = (n: number, from = 0, v = 'x'): Record<string, unknown> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, { v }]));

describe('etcd write plans', () => {
  it('overLimit names the operation count or the size, and passes what fits', () => {
    const limits = { maxRequestBytes: 10_000, maxTxnOps: 10 };
    expect(overLimit({ puts: [['k', 'v']], deletes: [] }, 'p/', limits)).toBeUndefined();
    expect(overLimit({ puts: Array.from({ length: 8 }, (_, i) => [`k${i}`, 'v'] as const), deletes: [] }, 'p/', limits)?.limit).toMatch(/--max-txn-ops/);
    expect(overLimit({ puts: [['k', 'x'.repeat(10_000)]], deletes: [] }, 'p/', limits)?.limit).toMatch(/--max-request-bytes/);
  });

  it.each([
    ['a change that fits: one txn', {}, { loose: records(3) }, 1],
    ['40 independent entries: several txns, the collection\'s own key last', {}, { loose: records(40) }, 7],
    ['nested independent host records', { ha: { g: 1, hosts: {} } }, { ha: { g: 2, hosts: records(30) } }, 6],
  ])('%s', (_what, a, b, txns) => {
    const before = encodeDocument(a, LAYOUT);
    const plan = planWrites(before, encodeDocument(b, LAYOUT), LAYOUT, 'p/', SMALL);
    if (!('chunks' in plan)) throw new Error(plan.over.detail);
    expect(plan.chunks).toHaveLength(txns);
    for (const c of plan.chunks) expect(overLimit(c, 'p/', SMALL)).toBeUndefined();
    const kvs = new Map(before);
    for (const c of plan.chunks) apply(kvs, c);
    expect(decodeDocument(kvs, LAYOUT)).toEqual(b);
  });

  it.each([
    ['entries of a collection not declared independent', { tied: records(40) }, /cannot be split/],
    ['one key over the byte limit', { loose: { big: 'x'.repeat(3000) }, tied: records(2) }, /one key of about \d+ bytes/],
  ])('refuses %s', (_what, b, detail) => {
    const plan = planWrites(new Map(), encodeDocument(b, LAYOUT), LAYOUT, 'p/', SMALL);
    expect('over' in plan && plan.over.detail).toMatch(detail);
  });

  it('every prefix of a split change decodes to a valid document: old or new entries, each whole, every node with its seen', () => {
    const node = (i: number, seen: number, tag: string): Record<string, unknown> => ({ host: `h${i}`, tag, seen });
    fc.assert(fc.property(fc.nat({ max: 30 }), fc.nat({ max: 30 }), fc.nat({ max: 30 }), (oldN, newN, hosts) => {
      const a = { nodes: Array.from({ length: oldN }, (_, i) => node(i, 1, 'old')), ha: { g: 1, hosts: records(hosts, 0, 'old') }, tied: { t: 1 } };
      const b = { nodes: Array.from({ length: newN }, (_, i) => node(i, 2, 'new')), ha: { g: 2, hosts: records(30, 5, 'new') }, tied: { t: 2 } };
      const before = encodeDocument(a, LAYOUT);
      const plan = planWrites(before, encodeDocument(b, LAYOUT), LAYOUT, 'p/', SMALL);
      if (!('chunks' in plan)) throw new Error(plan.over.detail);
      const kvs = new Map(before);
      for (const [i, c] of plan.chunks.entries()) {
        expect(opsOf(c) + 3).toBeLessThanOrEqual(SMALL.maxTxnOps);
        apply(kvs, c);
        const doc = decodeDocument(kvs, LAYOUT) as typeof b;
        for (const n of doc.nodes) {
          expect(typeof n.seen).toBe('number');
          expect(['old', 'new']).toContain(n.tag);
        }
        // What is not independent changes only with the last txn.
        expect(doc.tied).toEqual(i === plan.chunks.length - 1 ? b.tied : a.tied);
      }
      expect(decodeDocument(kvs, LAYOUT)).toEqual(b);
    }), { numRuns: 150 });
  });
});
