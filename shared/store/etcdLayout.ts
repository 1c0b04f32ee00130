/**
 * How a store's document is laid out in etcd keys (pure; shared/store/etcdStore.ts does the I/O).
 * etcd refuses a request over --max-request-bytes (1.5 MiB by default) and a txn of more than
 * --max-txn-ops operations (128), so the document is not one value: each top-level field is one key
 * (`f/<field>`), and a field named a collection keeps one key per entry (`c/<field>/<entry>`: a
 * record's key, or a list item's key from `keyOf`). An update writes only the keys whose JSON changed,
 * so appending one event or changing one instance record sends one small value.
 *
 * Keys here are relative to the store's prefix. Entry names are percent-encoded, so any record key
 * (`/`, `__proto__`) is plain data.
 */

/** A top-level field kept one key per entry. */
export type CollectionSpec =
  /** A plain object used as a map (`z.record`): one key per property. */
  | { readonly kind: 'record' }
  /**
   * An array whose items each have a unique key, sorting (as strings) in list order: the list is
   * rebuilt in key order (an event's seq, or the position, zero-padded with paddedKey).
   */
  | { readonly kind: 'list'; readonly keyOf: (item: unknown, index: number) => string };

export interface EtcdLayout {
  readonly collections?: Readonly<Record<string, CollectionSpec>>;
}

export const META_KEY = 'meta';
/** Rewritten by every update: the revision an update built on is this key's mod revision. */
export const HEAD_KEY = 'head';
const FIELD = 'f/';
const ENTRY = 'c/';

/** The width list keys from a number are padded to, so that they sort as strings in numeric order. */
export function paddedKey(n: number): string {
  return String(n).padStart(16, '0');
}

function fieldKey(field: string): string {
  return FIELD + encodeURIComponent(field);
}

function entryKey(field: string, entry: string): string {
  return `${ENTRY}${encodeURIComponent(field)}/${encodeURIComponent(entry)}`;
}

function collectionOf(layout: EtcdLayout, field: string): CollectionSpec | undefined {
  return Object.prototype.hasOwnProperty.call(layout.collections ?? {}, field) ? layout.collections?.[field] : undefined;
}

/**
 * The document as relative key → JSON text. A collection field also writes its own key (`f/<field>`,
 * the text `"record"` or `"list"`), so an empty collection reads back as `{}` or `[]`, not as absent.
 * Throws (an Error for the caller to wrap) when a list has two items of one key.
 */
export function encodeDocument(data: Readonly<Record<string, unknown>>, layout: EtcdLayout, cache?: WeakMap<object, string>): Map<string, string> {
  const out = new Map<string, string>();
  // A frozen entry cannot change, so its text is kept (event records: an update encodes 10,000 of them).
  const text = (v: unknown): string => {
    if (cache === undefined || typeof v !== 'object' || v === null || !Object.isFrozen(v)) return JSON.stringify(v);
    let t = cache.get(v);
    if (t === undefined) {
      t = JSON.stringify(v);
      cache.set(v, t);
    }
    return t;
  };
  for (const [field, value] of Object.entries(data)) {
    if (value === undefined) continue;
    const spec = collectionOf(layout, field);
    if (spec === undefined) {
      out.set(fieldKey(field), JSON.stringify(value));
      continue;
    }
    out.set(fieldKey(field), JSON.stringify(spec.kind));
    if (spec.kind === 'record') {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v !== undefined) out.set(entryKey(field, k), text(v));
      }
    } else {
      (value as readonly unknown[]).forEach((item, i) => {
        const name = spec.keyOf(item, i);
        const key = entryKey(field, name);
        // An invariant of the layout's caller (its keyOf), checked before anything is sent; update() wraps it in StoreWriteFailed.
        if (out.has(key)) throw new Error(`list ${field} has two items with key ${name}`);
        out.set(key, text(item));
      });
    }
  }
  return out;
}

/** The document back from its keys (the inverse of encodeDocument). Throws on text that is not JSON. */
export function decodeDocument(kvs: ReadonlyMap<string, string>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  const entries = new Map<string, [string, string][]>();
  for (const [key, text] of kvs) {
    if (key.startsWith(FIELD)) {
      setOwn(data, decodeURIComponent(key.slice(FIELD.length)), JSON.parse(text));
    } else if (key.startsWith(ENTRY)) {
      const rest = key.slice(ENTRY.length);
      const slash = rest.indexOf('/');
      const field = decodeURIComponent(rest.slice(0, slash));
      const list = entries.get(field) ?? [];
      list.push([decodeURIComponent(rest.slice(slash + 1)), text]);
      entries.set(field, list);
    }
  }
  for (const [field, kind] of Object.entries(data)) {
    if (kind !== 'record' && kind !== 'list') continue;
    const items = (entries.get(field) ?? []).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (kind === 'list') {
      data[field] = items.map(([, text]) => JSON.parse(text) as unknown);
    } else {
      const record: Record<string, unknown> = {};
      for (const [k, text] of items) setOwn(record, k, JSON.parse(text));
      data[field] = record;
    }
  }
  return data;
}

/** `__proto__` and friends as plain own properties, as JSON.parse makes them. */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export interface KeyDiff {
  readonly puts: ReadonlyArray<readonly [string, string]>;
  readonly deletes: readonly string[];
}

/** What turns `before` into `after`: the keys whose text changed or is new, and the keys gone. */
export function diffKeys(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): KeyDiff {
  const puts: [string, string][] = [];
  const deletes: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) puts.push([k, v]);
  for (const k of before.keys()) if (!after.has(k)) deletes.push(k);
  return { puts, deletes };
}

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

/** Undefined when the diff fits; else what is over (for StoreTooLarge). */
export function overLimit(diff: KeyDiff, prefix: string, limits: EtcdLimits): { detail: string; limit: string } | undefined {
  const ops = diff.puts.length + diff.deletes.length + FIXED_OPS;
  if (ops > limits.maxTxnOps) return { detail: `${ops} operations`, limit: `${limits.maxTxnOps} operations (--max-txn-ops)` };
  let bytes = REQUEST_OVERHEAD_BYTES;
  for (const [k, v] of diff.puts) bytes += prefix.length + Buffer.byteLength(k) + Buffer.byteLength(v);
  for (const k of diff.deletes) bytes += prefix.length + Buffer.byteLength(k);
  if (bytes > limits.maxRequestBytes) return { detail: `about ${bytes} bytes`, limit: `${limits.maxRequestBytes} bytes (--max-request-bytes)` };
  return undefined;
}
