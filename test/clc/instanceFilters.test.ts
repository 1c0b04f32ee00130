import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instanceFilterPredicate, INSTANCE_FILTER_NAMES, wildcardMatcher, type InstanceFilter } from '../../clc/core/instanceFilters.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import { filterTableTests, type FilterRow } from './filterTable.js';

const base: InstanceView = {
  instanceId: 'i-0000000a', reservationId: 'r-0000000a', ownerId: '000000000000', imageId: 'emi-0000000a',
  instanceType: 'm1.small', state: 'running', partition: 'cluster01', host: '127.0.12.11',
  launchTime: 0, launchIndex: 0, migration: { state: 'none' }, reported: true,
};
const other: InstanceView = {
  ...base, instanceId: 'i-0000000b', reservationId: 'r-0000000b', imageId: 'emi-0000000b', instanceType: 'c1.medium',
  state: 'pending', partition: 'cluster02', host: '127.0.12.21', migration: { state: 'migrating', source: '127.0.12.21', destination: '127.0.12.22' },
};
const gone: InstanceView = { ...base, instanceId: 'i-0000000c', state: 'terminated', host: undefined, reported: false, clientToken: 'tok-c' };
const all = [base, other, gone];

const select = (filters: InstanceFilter[]) => all.filter(instanceFilterPredicate(filters)).map((v) => v.instanceId);

describe('instance filters', () => {
  const rows: FilterRow<InstanceFilter>[] = [
    ['no filter', [], ['i-0000000a', 'i-0000000b', 'i-0000000c']],
    ['instance-state-name', [{ name: 'instance-state-name', values: ['running'] }], ['i-0000000a']],
    ['values are OR-ed', [{ name: 'instance-state-name', values: ['running', 'pending'] }], ['i-0000000a', 'i-0000000b']],
    ['filters are AND-ed', [{ name: 'instance-state-name', values: ['running', 'pending'] }, { name: 'availability-zone', values: ['cluster02'] }], ['i-0000000b']],
    ['availability-zone', [{ name: 'availability-zone', values: ['cluster01'] }], ['i-0000000a', 'i-0000000c']],
    ['instance-type', [{ name: 'instance-type', values: ['c1.medium'] }], ['i-0000000b']],
    ['image-id', [{ name: 'image-id', values: ['emi-0000000b'] }], ['i-0000000b']],
    ['instance-id', [{ name: 'instance-id', values: ['i-0000000c'] }], ['i-0000000c']],
    ['reservation-id', [{ name: 'reservation-id', values: ['r-0000000a'] }], ['i-0000000a', 'i-0000000c']],
    ['node: an instance on no node never matches', [{ name: 'node', values: ['*'] }], ['i-0000000a', 'i-0000000b']],
    ['node exact', [{ name: 'node', values: ['127.0.12.21'] }], ['i-0000000b']],
    ['migration-state', [{ name: 'migration-state', values: ['migrating'] }], ['i-0000000b']],
    ['client-token: only instances launched with one', [{ name: 'client-token', values: ['*'] }], ['i-0000000c']],
    ['wildcard *', [{ name: 'instance-type', values: ['m1.*'] }], ['i-0000000a', 'i-0000000c']],
    ['wildcard ?', [{ name: 'instance-id', values: ['i-0000000?'] }], ['i-0000000a', 'i-0000000b', 'i-0000000c']],
    ['no partial match', [{ name: 'instance-type', values: ['m1'] }], []],
    ['tag-key: any tag key', [{ name: 'tag-key', values: ['euca:node'] }], ['i-0000000a', 'i-0000000b']],
    ['tag-key with a wildcard', [{ name: 'tag-key', values: ['euca:node:migration:*'] }], ['i-0000000b']],
    ['tag-value: any tag value', [{ name: 'tag-value', values: ['127.0.12.22'] }], ['i-0000000b']],
    ['tag:<key>: that tag\'s value', [{ name: 'tag:euca:node', values: ['127.0.12.11'] }], ['i-0000000a']],
    ['tag:<key> of a migration tag', [{ name: 'tag:euca:node:migration:destination', values: ['127.0.12.2?'] }], ['i-0000000b']],
    ['tag:<key> takes no wildcard in the key', [{ name: 'tag:euca:*', values: ['*'] }], []],
    ['tag:<key> of a key no instance has', [{ name: 'tag:Name', values: ['*'] }], []],
  ];
  filterTableTests(rows, select, INSTANCE_FILTER_NAMES);
});

describe('wildcardMatcher', () => {
  it.each([
    ['a*c', 'abbbc', true], ['a*c', 'ac', true], ['a?c', 'abc', true], ['a?c', 'ac', false],
    ['a\\*c', 'a*c', true], ['a\\*c', 'abc', false], ['1.2', '1x2', false], ['(x)', '(x)', true], ['[a]', '[a]', true],
  ] as const)('%s ~ %s = %s', (p, s, m) => {
    expect(wildcardMatcher(p)(s)).toBe(m);
  });

  it('a pattern without wildcards matches exactly itself', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }).filter((s) => !/[*?\\]/.test(s)), fc.string({ maxLength: 20 }), (p, s) => {
      expect(wildcardMatcher(p)(s)).toBe(p === s);
    }));
  });
});
