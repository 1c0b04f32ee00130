/**
 * How one update's keys are sent within etcd's request limits (pure; etcdStore.ts sends them). A
 * change that fits is one txn. One that does not is split only where the layout says a part of it is
 * a valid document (etcdLayout.ts, `independent` collections): those entries go first, in as many
 * txns as they need, and everything else (top-level values, a collection's own key, entries of other
 * collections) goes last, in one txn. Every txn is guarded as a whole update is (the head key's
 * revision, the leader's fence), so a reader sees the document before, after, or with some of the
 * independent entries changed; a deposed leader's next txn is refused. What cannot be split that way
 * is refused whole (StoreTooLarge).
 */
import { diffKeys, parseKey, specAt, type EtcdLayout, type KeyDiff } from './etcdLayout.js';

/** Which of etcd's request limits a diff would pass, before it is sent. */
export interface EtcdLimits {
  /** etcd's --max-request-bytes (1.5 MiB by default): the whole txn, keys and values. */
  readonly maxRequestBytes: number;
  /** etcd's --max-txn-ops (128 by default). */
  readonly maxTxnOps: number;
}

export const DEFAULT_ETCD_LIMITS: EtcdLimits = Object.freeze({ maxRequestBytes: 1.5 * 1024 * 1024, maxTxnOps: 128 });

/** Room kept for the txn's compares, the head key and protobuf framing. */
const REQUEST_OVERHEAD_BYTES = 4096;
/** The compares (head revision, leader key) and the head put. */
const FIXED_OPS = 3;

export interface OverLimit {
  readonly detail: string;
  readonly limit: string;
}

const putBytes = (prefix: string, [k, v]: readonly [string, string]): number => prefix.length + Buffer.byteLength(k) + Buffer.byteLength(v);
const deleteBytes = (prefix: string, k: string): number => prefix.length + Buffer.byteLength(k);

/** Undefined when the diff fits in one txn; else what is over (for StoreTooLarge). */
export function overLimit(diff: KeyDiff, prefix: string, limits: EtcdLimits): OverLimit | undefined {
  const ops = diff.puts.length + diff.deletes.length + FIXED_OPS;
  if (ops > limits.maxTxnOps) return { detail: `${ops} operations`, limit: `${limits.maxTxnOps} operations (--max-txn-ops)` };
  let bytes = REQUEST_OVERHEAD_BYTES;
  for (const p of diff.puts) bytes += putBytes(prefix, p);
  for (const k of diff.deletes) bytes += deleteBytes(prefix, k);
  if (bytes > limits.maxRequestBytes) return { detail: `about ${bytes} bytes`, limit: `${limits.maxRequestBytes} bytes (--max-request-bytes)` };
  return undefined;
}

export type WritePlan =
  /** The txns to send in order (one, possibly empty, when the change fits). */
  | { readonly chunks: readonly KeyDiff[] }
  | { readonly over: OverLimit };

/** Whether `key` is an entry (or the detached values) of a collection the layout declares independent. */
function independentKey(key: string, layout: EtcdLayout): 'entry' | 'detached' | undefined {
  const parsed = parseKey(key);
  if (parsed === undefined || parsed.kind === 'value') return undefined;
  const spec = specAt(layout, parsed.path);
  return spec !== undefined && spec.kind !== 'object' && spec.independent === true ? parsed.kind : undefined;
}

/** The values of a detached key while entries of both versions may be read: the new ones over the old. */
function mergedDetached(before: string | undefined, after: string): string {
  const merged: Record<string, unknown> = {};
  for (const text of [before, after]) {
    if (text === undefined) continue;
    for (const [k, v] of Object.entries(JSON.parse(text) as Record<string, unknown>)) {
      Object.defineProperty(merged, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  return JSON.stringify(merged);
}

/** The txns that turn `before` (what etcd holds) into `after`, each within `limits`, or what is over. */
export function planWrites(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, layout: EtcdLayout, prefix: string, limits: EtcdLimits): WritePlan {
  const diff = diffKeys(before, after);
  const whole = overLimit(diff, prefix, limits);
  if (whole === undefined) return { chunks: [diff] };

  type Op = { readonly put: readonly [string, string] } | { readonly del: string };
  const loose: Op[] = [];
  const firstPuts: (readonly [string, string])[] = [];
  const lastPuts: (readonly [string, string])[] = [];
  const lastDeletes: string[] = [];
  for (const p of diff.puts) {
    const kind = independentKey(p[0], layout);
    if (kind === 'entry') loose.push({ put: p });
    else if (kind === 'detached') {
      // Written first with the old entries' values kept (entries of both versions are read meanwhile), exactly last.
      const merged = mergedDetached(before.get(p[0]), p[1]);
      firstPuts.push([p[0], merged]);
      if (merged !== p[1]) lastPuts.push(p);
    } else lastPuts.push(p);
  }
  for (const k of diff.deletes) {
    if (independentKey(k, layout) === 'entry') loose.push({ del: k });
    else lastDeletes.push(k);
  }
  const last: KeyDiff = { puts: lastPuts, deletes: lastDeletes };
  const lastOver = overLimit(last, prefix, limits);
  if (loose.length === 0 || lastOver !== undefined) {
    const over = lastOver ?? whole;
    return { over: { detail: `${over.detail} that cannot be split (not entries of a collection declared independent)`, limit: over.limit } };
  }

  const maxOps = limits.maxTxnOps - FIXED_OPS;
  const maxBytes = limits.maxRequestBytes - REQUEST_OVERHEAD_BYTES;
  const chunks: KeyDiff[] = [];
  let puts: (readonly [string, string])[] = [...firstPuts];
  let deletes: string[] = [];
  let bytes = firstPuts.reduce((n, p) => n + putBytes(prefix, p), 0);
  const firstOver = overLimit({ puts: firstPuts, deletes: [] }, prefix, limits);
  if (firstOver !== undefined) return { over: firstOver };
  for (const op of loose) {
    const size = 'put' in op ? putBytes(prefix, op.put) : deleteBytes(prefix, op.del);
    if (size > maxBytes) return { over: { detail: `one key of about ${size} bytes`, limit: `${limits.maxRequestBytes} bytes (--max-request-bytes)` } };
    if (puts.length + deletes.length + 1 > maxOps || bytes + size > maxBytes) {
      chunks.push({ puts, deletes });
      puts = [];
      deletes = [];
      bytes = 0;
    }
    if ('put' in op) puts.push(op.put);
    else deletes.push(op.del);
    bytes += size;
  }
  if (puts.length + deletes.length > 0) chunks.push({ puts, deletes });
  if (last.puts.length + last.deletes.length > 0) chunks.push(last);
  return { chunks };
}
