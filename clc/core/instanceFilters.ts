/**
 * DescribeInstances filters, EC2 semantics: values of one filter are OR-ed, filters are AND-ed, and
 * a value may hold `*` (any run) and `?` (one character) wildcards, `\` escaping either. Pure.
 */
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
} satisfies Record<string, (v: InstanceView) => readonly string[]>);

export type InstanceFilterName = keyof typeof INSTANCE_FILTERS;
export const INSTANCE_FILTER_NAMES = Object.freeze(Object.keys(INSTANCE_FILTERS) as InstanceFilterName[]);

export function isInstanceFilterName(name: string): name is InstanceFilterName {
  return Object.prototype.hasOwnProperty.call(INSTANCE_FILTERS, name);
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

/** A predicate true for the instances every filter accepts. */
export function instanceFilterPredicate(filters: readonly InstanceFilter[]): (v: InstanceView) => boolean {
  const compiled = filters.map((f) => ({ offered: INSTANCE_FILTERS[f.name], matchers: f.values.map(wildcardMatcher) }));
  return (v) => compiled.every(({ offered, matchers }) => offered(v).some((s) => matchers.some((m) => m(s))));
}
