/** Eucalyptus 4's system tags on instances, and DescribeTags' selection of them, table-driven and by property. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instanceTags } from '../../clc/core/instanceTags.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import { compareResourceTags, selectResourceTags, TAG_FILTER_NAMES, type TagFilter } from '../../clc/core/resourceTags.js';
import { migrationStateSchema } from '../../shared/protocol/common.js';
import { filterTableTests, type FilterRow } from './filterTable.js';

const base: InstanceView = {
  instanceId: 'i-0000000a', reservationId: 'r-0000000a', ownerId: '000000000000', imageId: 'emi-0000000a',
  instanceType: 'm1.small', state: 'running', partition: 'cluster01', host: '127.0.12.11',
  launchTime: 0, launchIndex: 0, migration: { state: 'none' }, reported: true,
};

describe('instanceTags', () => {
  const rows: [string, Partial<InstanceView>, [string, string][]][] = [
    ['on a node: where it runs', {}, [['euca:node', '127.0.12.11']]],
    ['on no node (gone from every node): none', { host: undefined, state: 'terminated', reported: false }, []],
    ['moving: where from and to, and the NC\'s migration state', { migration: { state: 'migrating', source: '127.0.12.11', destination: '127.0.12.12' } }, [
      ['euca:node', '127.0.12.11'], ['euca:node:migration:destination', '127.0.12.12'],
      ['euca:node:migration:source', '127.0.12.11'], ['euca:node:migration:state', 'migrating'],
    ]],
    ['queued in a plan (the NC still says none): hosts, no state', { migration: { state: 'none', source: '127.0.12.11', destination: '127.0.12.12' } }, [
      ['euca:node', '127.0.12.11'], ['euca:node:migration:destination', '127.0.12.12'], ['euca:node:migration:source', '127.0.12.11'],
    ]],
    ['an NC state without the plan\'s hosts: the state alone', { migration: { state: 'cleaning' } }, [
      ['euca:node', '127.0.12.11'], ['euca:node:migration:state', 'cleaning'],
    ]],
    ['a finished migration leaves no migration tag', { host: '127.0.12.12', migration: { state: 'none' } }, [['euca:node', '127.0.12.12']]],
  ];
  it.each(rows)('%s', (_n, over, expected) => {
    expect(instanceTags({ ...base, ...over }).map((t) => [t.key, t.value])).toEqual(expected);
  });

  const views = fc.record({
    host: fc.option(fc.ipV4(), { nil: undefined }),
    state: fc.constantFrom(...migrationStateSchema.options),
    source: fc.option(fc.ipV4(), { nil: undefined }),
    destination: fc.option(fc.ipV4(), { nil: undefined }),
  }).map(({ host, state, source, destination }): InstanceView => ({
    ...base, host, migration: { state, ...(source !== undefined ? { source } : {}), ...(destination !== undefined ? { destination } : {}) },
  }));

  it('keys are unique, sorted, and all euca:node*; values are the view\'s own', () => {
    fc.assert(fc.property(views, (v) => {
      const tags = instanceTags(v);
      const keys = tags.map((t) => t.key);
      expect(keys).toEqual([...new Set(keys)].sort());
      for (const t of tags) expect(t.key.startsWith('euca:node')).toBe(true);
      expect(tags.some((t) => t.key === 'euca:node')).toBe(v.host !== undefined);
    }));
  });
});

describe('selectResourceTags', () => {
  const a = base;
  const b: InstanceView = { ...base, instanceId: 'i-0000000b', host: '127.0.12.21', migration: { state: 'preparing', source: '127.0.12.21', destination: '127.0.12.22' } };
  const gone: InstanceView = { ...base, instanceId: 'i-00000009', host: undefined, state: 'terminated', reported: false };
  // Given out of order: the result is in (resource id, key) order whatever the input's.
  const all = [b, gone, a];
  const select = (filters: TagFilter[]) => selectResourceTags(all, filters).map((t) => `${t.resourceId} ${t.key}=${t.value}`);

  const rows: FilterRow<TagFilter>[] = [
    ['every tag, by resource id then key', [], [
      'i-0000000a euca:node=127.0.12.11',
      'i-0000000b euca:node=127.0.12.21',
      'i-0000000b euca:node:migration:destination=127.0.12.22',
      'i-0000000b euca:node:migration:source=127.0.12.21',
      'i-0000000b euca:node:migration:state=preparing',
    ]],
    ['key', [{ name: 'key', values: ['euca:node'] }], ['i-0000000a euca:node=127.0.12.11', 'i-0000000b euca:node=127.0.12.21']],
    ['key with a wildcard', [{ name: 'key', values: ['*:s*'] }], ['i-0000000b euca:node:migration:source=127.0.12.21', 'i-0000000b euca:node:migration:state=preparing']],
    ['value', [{ name: 'value', values: ['127.0.12.21'] }], ['i-0000000b euca:node=127.0.12.21', 'i-0000000b euca:node:migration:source=127.0.12.21']],
    ['resource-id', [{ name: 'resource-id', values: ['i-0000000a'] }], ['i-0000000a euca:node=127.0.12.11']],
    ['resource-type instance: all', [{ name: 'resource-type', values: ['instance'] }], [
      'i-0000000a euca:node=127.0.12.11', 'i-0000000b euca:node=127.0.12.21', 'i-0000000b euca:node:migration:destination=127.0.12.22',
      'i-0000000b euca:node:migration:source=127.0.12.21', 'i-0000000b euca:node:migration:state=preparing',
    ]],
    ['resource-type of a kind that has no tags here', [{ name: 'resource-type', values: ['image'] }], []],
    ['tag:<key>: every tag of the resources with that tag', [{ name: 'tag:euca:node:migration:state', values: ['prep*'] }], [
      'i-0000000b euca:node=127.0.12.21', 'i-0000000b euca:node:migration:destination=127.0.12.22',
      'i-0000000b euca:node:migration:source=127.0.12.21', 'i-0000000b euca:node:migration:state=preparing',
    ]],
    ['filters are AND-ed', [{ name: 'key', values: ['euca:node'] }, { name: 'value', values: ['*.21'] }], ['i-0000000b euca:node=127.0.12.21']],
  ];
  filterTableTests(rows, select, TAG_FILTER_NAMES);

  it('the order is total and locale-free (code-unit order)', () => {
    expect([{ resourceId: 'i-b', key: 'k' }, { resourceId: 'i-B', key: 'k' }, { resourceId: 'i-b', key: 'K' }].sort(compareResourceTags))
      .toEqual([{ resourceId: 'i-B', key: 'k' }, { resourceId: 'i-b', key: 'K' }, { resourceId: 'i-b', key: 'k' }]);
  });
});
