/**
 * DescribeInstances filters, EC2 semantics: values of one filter are OR-ed, filters are AND-ed, and
 * a value may hold `*` (any run) and `?` (one character) wildcards, `\` escaping either. Pure.
 */
import { instanceTags } from './instanceTags.js';
import type { InstanceView } from './instanceView.js';

/** Filter name → the values an instance offers for it. `node` is Ferry's: the host it runs on. */
export const INSTANCE_FILTERS = Object.freeze({
  'instance-state-name': (v: InstanceView) => [v.state],
  'availability-zone': (v: InstanceView) => [v.partition],
  'instance-type': (v: InstanceView) => [v.instanceType],
  'image-id': (v: InstanceView) => [v.imageId],
  'instance-id': (v: InstanceView) => [v.instanceId],
  'reservation-id': (v: InstanceView) => [v.reservationId],
  'node': (v: InstanceView) => (v.host === undefined ? [] : [v.host]),
  'migration-state': (v: InstanceView) => [v.migration.state],
  'client-token': (v: InstanceView) => (v.clientToken === undefined ? [] : [v.clientToken]),
  // EC2's: any of the instance's tags (Eucalyptus's system tags, clc/core/instanceTags.ts).
  'tag-key': (v: InstanceView) => instanceTags(v).map((t) => t.key),
  'tag-value': (v: InstanceView) => instanceTags(v).map((t) => t.value),
} satisfies Record<string, (v: InstanceView) => readonly string[]>);

/** EC2's `tag:<key>`: the values of the tag with exactly that key (the key takes no wildcard). */
export const TAG_FILTER_PREFIX = 'tag:';
export type TagKeyFilterName = `${typeof TAG_FILTER_PREFIX}${string}`;

export type InstanceFilterName = keyof typeof INSTANCE_FILTERS | TagKeyFilterName;
/** The fixed names; `tag:<key>` is open-ended. */
export const INSTANCE_FILTER_NAMES = Object.freeze(Object.keys(INSTANCE_FILTERS) as (keyof typeof INSTANCE_FILTERS)[]);

export function isTagKeyFilterName(name: string): name is TagKeyFilterName {
  return name.startsWith(TAG_FILTER_PREFIX) && name.length > TAG_FILTER_PREFIX.length;
}

export function isInstanceFilterName(name: string): name is InstanceFilterName {
  return Object.prototype.hasOwnProperty.call(INSTANCE_FILTERS, name) || isTagKeyFilterName(name);
}

/** The key a `tag:<key>` filter names. */
export function tagKeyOf(name: TagKeyFilterName): string {
  return name.slice(TAG_FILTER_PREFIX.length);
}

export interface InstanceFilter {
  readonly name: InstanceFilterName;
  readonly values: readonly string[];
}

/** Compiles an EC2 filter value into a whole-string matcher. */
export function wildcardMatcher(pattern: string): (s: string) => boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i] as string);
    else if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else re += escapeRe(c);
  }
  const compiled = new RegExp(`^${re}$`, 'u');
  return (s) => compiled.test(s);
}

/** Escapes only RegExp syntax characters: with the `u` flag any other escape is a SyntaxError. */
function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** One filter of a request: its name, and the values (patterns) asked for. */
export interface NamedFilter<N extends string> {
  readonly name: N;
  readonly values: readonly string[];
}

/** A filter table's names, and the guard that a name from a request is one of them. */
export function filterNamesOf<T extends object>(table: T): { readonly names: readonly (keyof T & string)[]; readonly isName: (name: string) => name is keyof T & string } {
  return Object.freeze({
    names: Object.freeze(Object.keys(table) as (keyof T & string)[]),
    isName: (name: string): name is keyof T & string => Object.prototype.hasOwnProperty.call(table, name),
  });
}

/** One filter over `T`: what an item offers for it, and the values (patterns) asked for. */
export interface OfferedFilter<T> {
  readonly offered: (item: T) => readonly string[];
  readonly values: readonly string[];
}

/** A predicate true for the items every filter accepts: one offered value matches one of its patterns. */
export function filterPredicate<T>(filters: readonly OfferedFilter<T>[]): (item: T) => boolean {
  const compiled = filters.map((f) => ({ offered: f.offered, matchers: f.values.map(wildcardMatcher) }));
  return (item) => compiled.every(({ offered, matchers }) => offered(item).some((s) => matchers.some((m) => m(s))));
}

function offeredBy(name: InstanceFilterName): (v: InstanceView) => readonly string[] {
  if (!isTagKeyFilterName(name)) return INSTANCE_FILTERS[name];
  const key = tagKeyOf(name);
  return (v) => instanceTags(v).filter((t) => t.key === key).map((t) => t.value);
}

/** A predicate true for the instances every filter accepts. */
export function instanceFilterPredicate(filters: readonly InstanceFilter[]): (v: InstanceView) => boolean {
  return filterPredicate(filters.map((f) => ({ offered: offeredBy(f.name), values: f.values })));
}
