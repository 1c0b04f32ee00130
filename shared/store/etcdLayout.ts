/**
 * How a store's document is laid out in etcd keys (pure; shared/store/etcdStore.ts does the I/O).
 * etcd refuses a request over --max-request-bytes (1.5 MiB by default) and a txn of more than
 * --max-txn-ops operations (128), so the document is not one value: each top-level field is one key
 * (`f/<field>`), and a field named a collection keeps one key per entry (`c/<field>/<entry>`: a
 * record's key, or a list item's key from `keyOf`). A field declared an object keeps the rest of
 * itself in its own key and lays out its declared fields below it, at any depth: `ha` with `hosts` a
 * record is `f/ha` (the section without its hosts), `f/ha/hosts` and `c/ha/hosts/<host>`. An update
 * writes only the keys whose JSON changed, so appending one event or changing one host's record sends
 * one small value. Properties a collection `detached` are kept for all its entries in one key
 * (`d/<path>/<property>`: entry → value), so a value every entry changes together (a node's lastSeen)
 * is one key to write, not one per entry.
 *
 * Keys here are relative to the store's prefix. Every path segment and entry name is
 * percent-encoded, so `/` separates segments only, and any field or record key (`a.b`, `a/b`,
 * `__proto__`) is plain data.
 */

interface CollectionCommon {
  /**
   * Each entry stands alone (a host's HA record, a cached node): any part of a change to the entries
   * is itself a valid document, so a change over etcd's limits may be sent as several txns
   * (etcdChunks.ts). Not declared: such a change is refused whole (StoreTooLarge).
   */
  readonly independent?: boolean;
  /**
   * Entry properties kept in one key for the whole collection, not in each entry's key. Any version
   * of the entry may be read with any value of them (a split change writes them before the entries).
   */
  readonly detached?: readonly string[];
}

/** A field kept one key per entry. */
export type CollectionSpec = CollectionCommon & (
  /** A plain object used as a map (`z.record`): one key per property. */
  | { readonly kind: 'record' }
  /**
   * An array whose items each have a unique key, sorting (as strings) in list order: the list is
   * rebuilt in key order (an event's seq, or the position, zero-padded with paddedKey).
   */
  | { readonly kind: 'list'; readonly keyOf: (item: unknown, index: number) => string }
);

/** A field that is an object some of whose own fields are laid out (its key holds the rest of it). */
export interface ObjectSpec {
  readonly kind: 'object';
  readonly fields: Readonly<Record<string, FieldSpec>>;
}

export type FieldSpec = CollectionSpec | ObjectSpec;

export interface EtcdLayout {
  /** Top-level fields laid out otherwise than as one key (the name is from when only collections were). */
  readonly collections?: Readonly<Record<string, FieldSpec>>;
}

export const META_KEY = 'meta';
/** Rewritten by every update: the revision an update built on is this key's mod revision. */
export const HEAD_KEY = 'head';
const VALUE = 'f/';
const ENTRY = 'c/';
const DETACHED = 'd/';

/** The width list keys from a number are padded to, so that they sort as strings in numeric order. */
export function paddedKey(n: number): string {
  return String(n).padStart(16, '0');
}

type Path = readonly string[];

const pathKey = (path: Path): string => path.map(encodeURIComponent).join('/');
const valueKey = (path: Path): string => VALUE + pathKey(path);
const entryKey = (path: Path, entry: string): string => `${ENTRY}${pathKey(path)}/${encodeURIComponent(entry)}`;
const detachedKey = (path: Path, prop: string): string => `${DETACHED}${pathKey(path)}/${encodeURIComponent(prop)}`;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function own<V>(o: Readonly<Record<string, V>> | undefined, k: string): V | undefined {
  return o !== undefined && hasOwn(o, k) ? o[k] : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `__proto__` and friends as plain own properties, as JSON.parse makes them. */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** A copy of `o` without `drop`, its other properties in their order. */
function without(o: Record<string, unknown>, drop: (k: string) => boolean): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!drop(k)) setOwn(rest, k, v);
  return rest;
}

/** The spec of the field at `path` (segments, not encoded), if the layout declares one. */
export function specAt(layout: EtcdLayout, path: Path): FieldSpec | undefined {
  let fields = layout.collections;
  let spec: FieldSpec | undefined;
  for (const seg of path) {
    if (fields === undefined) return undefined;
    spec = own(fields, seg);
    fields = spec?.kind === 'object' ? spec.fields : undefined;
  }
  return spec;
}

/** What a relative key is: a value (`f/`), an entry (`c/`) or detached values (`d/`) of the field at `path`; undefined for any other key. */
export function parseKey(key: string): { readonly kind: 'value' | 'entry' | 'detached'; readonly path: string[]; readonly name?: string } | undefined {
  const kind = key.startsWith(VALUE) ? 'value' : key.startsWith(ENTRY) ? 'entry' : key.startsWith(DETACHED) ? 'detached' : undefined;
  if (kind === undefined) return undefined;
  const segs = key.slice(2).split('/').map(decodeURIComponent);
  if (kind === 'value') return { kind, path: segs };
  if (segs.length < 2) return undefined;
  return { kind, path: segs.slice(0, -1), name: segs[segs.length - 1] as string };
}

/**
 * The document as relative key → JSON text. A collection field also writes its own key (`f/<path>`,
 * the text `"record"` or `"list"`), so an empty collection reads back as `{}` or `[]`, not as absent,
 * and its entries are read only once that key is there. Throws (an Error for the caller to wrap)
 * when a list has two items of one key.
 */
export function encodeDocument(data: Readonly<Record<string, unknown>>, layout: EtcdLayout, cache?: WeakMap<object, string>): Map<string, string> {
  const out = new Map<string, string>();
  // A frozen entry cannot change, so its text is kept (event records: an update encodes 10,000 of them).
  const text = (v: unknown): string => {
    if (cache === undefined || typeof v !== 'object' || v === null || !Object.isFrozen(v)) return JSON.stringify(v) ?? 'null';
    let t = cache.get(v);
    if (t === undefined) {
      t = JSON.stringify(v);
      cache.set(v, t);
    }
    return t;
  };
  const encodeField = (path: Path, value: unknown, spec: FieldSpec | undefined): void => {
    if (spec?.kind === 'object' && isPlainObject(value)) {
      out.set(valueKey(path), JSON.stringify(without(value, (k) => own(spec.fields, k) !== undefined)));
      for (const [k, v] of Object.entries(value)) {
        const inner = own(spec.fields, k);
        if (inner !== undefined && v !== undefined) encodeField([...path, k], v, inner);
      }
      return;
    }
    const fits = spec?.kind === 'record' ? isPlainObject(value) : spec?.kind === 'list' ? Array.isArray(value) : false;
    if (spec === undefined || spec.kind === 'object' || !fits) {
      out.set(valueKey(path), JSON.stringify(value));
      return;
    }
    out.set(valueKey(path), JSON.stringify(spec.kind));
    const named: [string, unknown][] = spec.kind === 'record'
      ? Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
      : (value as readonly unknown[]).map((item, i) => [spec.keyOf(item, i), item]);
    const detached = spec.detached ?? [];
    const moved = detached.map(() => ({}) as Record<string, unknown>);
    const isDetached = (k: string): boolean => detached.includes(k);
    const base = entryKey(path, '');
    for (const [name, item] of named) {
      const key = base + encodeURIComponent(name);
      // An invariant of the layout's caller (its keyOf), checked before anything is sent; update() wraps it in StoreWriteFailed.
      if (out.has(key)) throw new Error(`list ${pathKey(path)} has two items with key ${name}`);
      if (detached.length === 0 || !isPlainObject(item)) {
        out.set(key, text(item));
        continue;
      }
      detached.forEach((prop, i) => { if (hasOwn(item, prop) && item[prop] !== undefined) setOwn(moved[i] as Record<string, unknown>, name, item[prop]); });
      out.set(key, JSON.stringify(without(item, isDetached)));
    }
    detached.forEach((prop, i) => out.set(detachedKey(path, prop), JSON.stringify(moved[i])));
  };
  for (const [field, value] of Object.entries(data)) {
    if (value !== undefined) encodeField([field], value, own(layout.collections, field));
  }
  return out;
}

/**
 * The document back from its keys (the inverse of encodeDocument). Throws on text that is not JSON.
 * A collection without its `f/` key yet is read as its parent holds it: inline, as a layout before
 * the collection was declared wrote it (entries of it are ignored until the key is written).
 */
export function decodeDocument(kvs: ReadonlyMap<string, string>, layout: EtcdLayout = {}): Record<string, unknown> {
  const values = new Map<string, string>();
  const entries = new Map<string, [string, string][]>();
  const detached = new Map<string, [string, string][]>();
  const data: Record<string, unknown> = {};
  for (const [key, text] of kvs) {
    const parsed = parseKey(key);
    if (parsed === undefined) continue;
    const pk = pathKey(parsed.path);
    if (parsed.kind === 'value') {
      if (parsed.path.length === 1) setOwn(data, parsed.path[0] as string, JSON.parse(text));
      else values.set(pk, text);
      continue;
    }
    const into = parsed.kind === 'entry' ? entries : detached;
    const list = into.get(pk) ?? [];
    list.push([parsed.name as string, text]);
    into.set(pk, list);
  }
  const decodeField = (container: Record<string, unknown>, name: string, path: Path, spec: FieldSpec): void => {
    const value = container[name];
    if (spec.kind === 'object') {
      if (!isPlainObject(value)) return;
      for (const [f, inner] of Object.entries(spec.fields)) {
        const text = values.get(pathKey([...path, f]));
        if (text !== undefined) setOwn(value, f, JSON.parse(text));
        if (hasOwn(value, f)) decodeField(value, f, [...path, f], inner);
      }
      return;
    }
    if (value !== spec.kind) return;
    const pk = pathKey(path);
    const items = (entries.get(pk) ?? []).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, text]) => [k, JSON.parse(text)] as [string, unknown]);
    const byName = new Map(items);
    for (const [prop, text] of detached.get(pk) ?? []) {
      const moved = JSON.parse(text) as unknown;
      if (!isPlainObject(moved)) continue;
      for (const [entry, v] of Object.entries(moved)) {
        const item = byName.get(entry);
        if (isPlainObject(item)) setOwn(item, prop, v);
      }
    }
    if (spec.kind === 'list') {
      setOwn(container, name, items.map(([, v]) => v));
    } else {
      const record: Record<string, unknown> = {};
      for (const [k, v] of items) setOwn(record, k, v);
      setOwn(container, name, record);
    }
  };
  for (const [field, spec] of Object.entries(layout.collections ?? {})) {
    if (hasOwn(data, field)) decodeField(data, field, [field], spec);
  }
  return data;
}

/**
 * What an update diffs against after a read: this process's encoding of what it read (`encoded`;
 * not etcd's texts, which may differ only in key order after validate), except that keys etcd does
 * not hold are left out (the next update writes them), and a collection etcd still holds inline,
 * without its `f/` key (an older layout, or a move cut short), is left out with its entries and its
 * parents' keys (the next update moves it out) while entries of it that etcd holds and the document
 * does not are kept (the next update deletes them: they would be read once its `f/` key is written).
 * Other keys only etcd holds are left alone, as before (a newer build's field, say).
 */
export function reconcileWithStored(encoded: ReadonlyMap<string, string>, stored: ReadonlyMap<string, string>, layout: EtcdLayout): Map<string, string> {
  const unmoved: string[] = [];
  for (const key of encoded.keys()) {
    const parsed = parseKey(key);
    if (parsed?.kind !== 'value' || stored.has(key)) continue;
    const spec = specAt(layout, parsed.path);
    if (spec !== undefined && spec.kind !== 'object') unmoved.push(pathKey(parsed.path));
  }
  const stale = (key: string): boolean => {
    if (unmoved.length === 0) return false;
    const parsed = parseKey(key);
    if (parsed === undefined) return false;
    const pk = pathKey(parsed.path);
    return parsed.kind === 'value' ? unmoved.some((u) => u.startsWith(`${pk}/`)) : unmoved.includes(pk);
  };
  const doc = new Map<string, string>();
  for (const [k, v] of encoded) if (stored.has(k) && !stale(k)) doc.set(k, v);
  for (const [k, v] of stored) if (!encoded.has(k) && stale(k) && parseKey(k)?.kind !== 'value') doc.set(k, v);
  return doc;
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
