/**
 * AWS Query "flattened" parameters (`InstanceId.1`, `Filter.1.Name`, `Filter.1.Value.2`,
 * `Placement.AvailabilityZone`) → a tree of maps, lists and strings that a zod schema can check.
 *
 * Hand-rolled because no maintained npm library parses AWS's flattened form: `qs` wants `a[0]`
 * brackets and treats dots as plain characters, and the AWS SDKs only serialise. The rules are
 * small and strict so every action sees the same shape:
 * - a key is dot-separated segments; a segment is a name (`[A-Za-z][A-Za-z0-9_-]*`) or a 1-based
 *   index without leading zeros; indexes under one parent must run 1..n with no gap;
 * - a key given twice, a key that is both a value and a parent (`Filter.1=x&Filter.1.Name=y`),
 *   and a parent mixing indexes and names are MalformedQueryString;
 * - maps have no prototype, so `constructor` or `toString` are just names.
 */
import { ClcErrors } from '../core/errors.js';
import { showKey } from '../core/showKey.js';

export type ParamValue = string | ParamList | ParamMap;
export type ParamList = readonly ParamValue[];
export interface ParamMap {
  readonly [name: string]: ParamValue;
}

/** Bounds that keep one request's parse cheap; far above anything an EC2 client sends. */
export const PARAM_LIMITS = Object.freeze({ maxPairs: 2000, maxKeyLength: 256, maxDepth: 6, maxIndex: 1000 });

const NAME_SEGMENT = /^[A-Za-z][A-Za-z0-9_-]*$/;
const INDEX_SEGMENT = /^[1-9][0-9]*$/;

interface Leaf { readonly kind: 'leaf'; readonly key: string; readonly value: string }
interface Branch { readonly kind: 'branch'; readonly key: string; readonly children: Map<string, Node> }
type Node = Leaf | Branch;

function malformed(detail: string): never {
  throw ClcErrors.make('MalformedQueryString', { detail });
}

function splitKey(key: string): string[] {
  if (key.length === 0) malformed('a parameter has an empty name');
  if (key.length > PARAM_LIMITS.maxKeyLength) malformed(`parameter ${showKey(key)} has a name longer than ${PARAM_LIMITS.maxKeyLength} characters`);
  const segments = key.split('.');
  if (segments.length > PARAM_LIMITS.maxDepth) malformed(`parameter ${showKey(key)} nests deeper than ${PARAM_LIMITS.maxDepth} levels`);
  for (const s of segments) {
    if (INDEX_SEGMENT.test(s)) {
      if (Number(s) > PARAM_LIMITS.maxIndex) malformed(`parameter ${showKey(key)} has an index above ${PARAM_LIMITS.maxIndex}`);
    } else if (!NAME_SEGMENT.test(s)) {
      malformed(`parameter ${showKey(key)} is not a valid parameter name`);
    }
  }
  return segments;
}

function insert(root: Branch, key: string, value: string): void {
  const segments = splitKey(key);
  let parent = root;
  segments.forEach((seg, i) => {
    const path = segments.slice(0, i + 1).join('.');
    const existing = parent.children.get(seg);
    if (i === segments.length - 1) {
      if (existing?.kind === 'leaf') malformed(`parameter ${showKey(key)} is given more than once`);
      if (existing?.kind === 'branch') malformed(`parameter ${showKey(key)} is given both as a value and as a parent of other parameters`);
      parent.children.set(seg, { kind: 'leaf', key, value });
      return;
    }
    if (existing?.kind === 'leaf') malformed(`parameter ${showKey(existing.key)} is given both as a value and as a parent of other parameters`);
    const branch: Branch = existing ?? { kind: 'branch', key: path, children: new Map() };
    parent.children.set(seg, branch);
    parent = branch;
  });
}

function freeze(node: Node): ParamValue {
  if (node.kind === 'leaf') return node.value;
  const names = [...node.children.keys()];
  const indexed = names.filter((n) => INDEX_SEGMENT.test(n));
  if (indexed.length > 0 && indexed.length < names.length) {
    malformed(`parameter ${showKey(node.key)} mixes numbered members (.1, .2, ...) with named ones`);
  }
  if (indexed.length > 0) {
    const list: ParamValue[] = [];
    for (let i = 1; i <= indexed.length; i++) {
      const child = node.children.get(String(i));
      if (child === undefined) malformed(`parameter ${showKey(node.key)} has members numbered with a gap (missing .${i})`);
      list.push(freeze(child));
    }
    return Object.freeze(list);
  }
  const map: Record<string, ParamValue> = Object.create(null) as Record<string, ParamValue>;
  for (const [name, child] of node.children) map[name] = freeze(child);
  return Object.freeze(map);
}

/** Builds the parameter tree from decoded key/value pairs, or throws MalformedQueryString. */
export function parseQueryParams(pairs: Iterable<readonly [string, string]>): ParamMap {
  const root: Branch = { kind: 'branch', key: '(root)', children: new Map() };
  let count = 0;
  for (const [key, value] of pairs) {
    if (++count > PARAM_LIMITS.maxPairs) malformed(`more than ${PARAM_LIMITS.maxPairs} parameters`);
    insert(root, key, value);
  }
  return freeze(root) as ParamMap;
}

/** The AWS name of a place in the tree: ['Filter', 0, 'Value', 1] → Filter.1.Value.2. */
export function awsParamName(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? String(p + 1) : String(p))).join('.');
}

/** The value at a zod-style path, or undefined. */
export function valueAt(tree: ParamValue, path: readonly PropertyKey[]): ParamValue | undefined {
  let cur: ParamValue | undefined = tree;
  for (const p of path) {
    if (cur === undefined || typeof cur === 'string') return undefined;
    if (Array.isArray(cur)) {
      cur = typeof p === 'number' ? (cur as ParamList)[p] : undefined;
    } else {
      const map = cur as ParamMap;
      cur = typeof p === 'string' && Object.prototype.hasOwnProperty.call(map, p) ? map[p] : undefined;
    }
  }
  return cur;
}
