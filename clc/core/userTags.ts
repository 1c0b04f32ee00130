/**
 * User tags on instances (EC2's CreateTags, DeleteTags and RunInstances' TagSpecification): what a
 * key and a value may be, what an id names, and a resource's tags after a create or a delete. Pure:
 * the actions validate with these at the edge, then apply the edit inside one store update.
 *
 * EC2's rules: a key is 1 to 128 Unicode characters, a value 0 to 256, a resource has at most 50
 * user tags (tags AWS itself sets, `aws:`, do not count and cannot be written by users). Eucalyptus
 * reserves `euca:` as well (TagHelper.reservedPrefixes), for the system tags of clc/core/instanceTags.ts.
 */
import { z } from 'zod';
import { VOLUME_ID } from '../../shared/protocol/volumes.js';
import { byCodeUnits } from './codeUnits.js';

export const tagSchema = z.object({ key: z.string(), value: z.string() });
export type Tag = Readonly<z.infer<typeof tagSchema>>;

export const MAX_TAG_KEY_CHARS = 128;
export const MAX_TAG_VALUE_CHARS = 256;
/** EC2's limit of user tags per resource; system tags are not counted. */
export const MAX_USER_TAGS = 50;
/** Reserved in any case, as EC2 reserves `aws:`, `AWS:` and every mix. */
export const RESERVED_TAG_PREFIXES: readonly string[] = Object.freeze(['aws:', 'euca:']);

/** Why a key or a value cannot be stored. */
export type TagProblem =
  | { readonly kind: 'empty-key' }
  | { readonly kind: 'too-long'; readonly what: 'key' | 'value'; readonly max: number }
  | { readonly kind: 'reserved'; readonly prefix: string }
  | { readonly kind: 'not-xml'; readonly what: 'key' | 'value' };

/** Characters XML 1.0 can carry: anything else could not come back in a tagSet as it was stored. */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Length in Unicode characters (code points), as EC2 counts. */
export function unicodeLength(s: string): number {
  return [...s].length;
}

export function reservedPrefixOf(key: string): string | undefined {
  const lower = key.toLowerCase();
  return RESERVED_TAG_PREFIXES.find((p) => lower.startsWith(p));
}

export function tagKeyProblem(key: string): TagProblem | undefined {
  if (key.length === 0) return { kind: 'empty-key' };
  if (unicodeLength(key) > MAX_TAG_KEY_CHARS) return { kind: 'too-long', what: 'key', max: MAX_TAG_KEY_CHARS };
  if (NOT_XML_CHAR.test(key)) return { kind: 'not-xml', what: 'key' };
  const prefix = reservedPrefixOf(key);
  return prefix === undefined ? undefined : { kind: 'reserved', prefix };
}

export function tagValueProblem(value: string): TagProblem | undefined {
  if (unicodeLength(value) > MAX_TAG_VALUE_CHARS) return { kind: 'too-long', what: 'value', max: MAX_TAG_VALUE_CHARS };
  return NOT_XML_CHAR.test(value) ? { kind: 'not-xml', what: 'value' } : undefined;
}

/** EC2's wording where it has one. */
export function describeTagProblem(p: TagProblem): string {
  switch (p.kind) {
    case 'empty-key': return 'Tag key cannot be null or empty.';
    case 'too-long': return `Tag ${p.what} exceeds the maximum length of ${p.max} characters.`;
    case 'reserved': return `Tag keys starting with '${p.prefix}' are reserved for internal use (aws: by AWS, euca: for Eucalyptus's system tags).`;
    case 'not-xml': return `The tag ${p.what} holds a character XML cannot carry (a control character or a non-character).`;
  }
}

/** The first key given twice, if any: a request must say once what a key becomes. */
export function repeatedKey(keys: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k)) return k;
    seen.add(k);
  }
  return undefined;
}

/** Tags in key order (code units): the order they are stored and shown in. */
export function sortTags(tags: Iterable<Tag>): Tag[] {
  return [...tags].sort((a, b) => byCodeUnits(a.key, b.key));
}

/** A resource's tags after CreateTags: each given key set to its value (added or overwritten). */
export function withTags(existing: readonly Tag[] | undefined, added: readonly Tag[]): Tag[] {
  const byKey = new Map((existing ?? []).map((t) => [t.key, t.value]));
  for (const t of added) byKey.set(t.key, t.value);
  return sortTags([...byKey].map(([key, value]) => ({ key, value })));
}

/** One DeleteTags `Tag.N`: the key, and when a value is given (even empty) only that key=value. */
export interface TagSelector {
  readonly key: string;
  readonly value?: string;
}

/** A resource's tags after DeleteTags; `selectors` undefined (no Tag.N at all) deletes every user tag, as EC2. */
export function withoutTags(existing: readonly Tag[] | undefined, selectors: readonly TagSelector[] | undefined): Tag[] {
  if (selectors === undefined) return [];
  return (existing ?? []).filter((t) => !selectors.some((s) => s.key === t.key && (s.value === undefined || s.value === t.value)));
}

/** What a resource id given to CreateTags / DeleteTags names. */
export type ResourceIdKind =
  /** One of Ferry's instance ids, lower-cased (Eucalyptus 3 printed them upper-case). */
  | { readonly kind: 'instance'; readonly instanceId: string }
  /** `i-` but not 8 hex digits. */
  | { readonly kind: 'malformed-instance' }
  /** One of Ferry's volume ids (vol- and 8 or 17 hex digits), lower-cased. */
  | { readonly kind: 'volume'; readonly volumeId: string }
  /** A well-formed id of another EC2 resource (snap-, emi-, sg-, ...): Ferry tags instances and volumes only. */
  | { readonly kind: 'other-resource'; readonly prefix: string }
  /** No EC2 id at all. */
  | { readonly kind: 'invalid' };

const INSTANCE_ID = /^i-[0-9a-f]{8}$/;
/** Eucalyptus's TagManager: a lower-case type prefix, then 8 or 17 hex digits. */
const EC2_RESOURCE_ID = /^([a-z]{1,32})-[0-9a-fA-F]{8}(?:[0-9a-fA-F]{9})?$/;

export function classifyResourceId(id: string): ResourceIdKind {
  const lower = id.toLowerCase();
  if (INSTANCE_ID.test(lower)) return { kind: 'instance', instanceId: lower };
  if (lower.startsWith('i-')) return { kind: 'malformed-instance' };
  if (VOLUME_ID.test(lower)) return { kind: 'volume', volumeId: lower };
  const m = EC2_RESOURCE_ID.exec(id);
  return m ? { kind: 'other-resource', prefix: m[1] as string } : { kind: 'invalid' };
}

/** Tagged ids by the resource they name (every id already classified as an instance's or a volume's). */
export function splitResourceIds(ids: readonly string[]): { readonly instanceIds: string[]; readonly volumeIds: string[] } {
  return { instanceIds: ids.filter((id) => !id.startsWith('vol-')), volumeIds: ids.filter((id) => id.startsWith('vol-')) };
}

/** What tagging needs of an instance's or a volume's record. */
export interface TaggableRecord {
  readonly ownerId: string;
  readonly userTags?: readonly Tag[];
}

/** Who asks: the admin may tag every instance and volume, anyone else only their own account's. */
export interface Tagger {
  readonly accountId: string;
  readonly isAdmin: boolean;
}

export type RetagPlan =
  /** Ids with no record, or of another account (hidden from a non-admin, as EC2 hides them). */
  | { readonly kind: 'not-found'; readonly ids: readonly string[] }
  /** Instances the edit would leave with more than MAX_USER_TAGS. */
  | { readonly kind: 'over-limit'; readonly ids: readonly string[] }
  /** Every instance's tags after the edit. */
  | { readonly kind: 'ok'; readonly next: ReadonlyMap<string, readonly Tag[]> };

/**
 * CreateTags / DeleteTags over `ids` (distinct ids of one kind of record), all or nothing: every id is checked, and
 * every result against the limit, before anything would change.
 */
export function planRetag(
  records: Readonly<Record<string, TaggableRecord>>, ids: readonly string[], who: Tagger,
  edit: (tags: readonly Tag[] | undefined) => readonly Tag[],
): RetagPlan {
  const visible = (id: string): TaggableRecord | undefined => {
    const r = Object.prototype.hasOwnProperty.call(records, id) ? records[id] : undefined;
    return r !== undefined && (who.isAdmin || r.ownerId === who.accountId) ? r : undefined;
  };
  const missing = ids.filter((id) => visible(id) === undefined);
  if (missing.length > 0) return { kind: 'not-found', ids: missing };
  const next = new Map(ids.map((id) => [id, edit(visible(id)?.userTags)]));
  const over = ids.filter((id) => (next.get(id)?.length ?? 0) > MAX_USER_TAGS);
  return over.length > 0 ? { kind: 'over-limit', ids: over } : { kind: 'ok', next };
}
