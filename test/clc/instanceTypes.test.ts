/** clc/core/instanceTypes.ts: order, units, filters, selection and capacity of DescribeInstanceTypes, without a server. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  capacityByType, compareVmTypes, diskSizeInGB, INSTANCE_TYPE_FILTER_NAMES, invalidInstanceTypeFilterValue, selectInstanceTypes,
  type InstanceTypeFilter, type InstanceTypeFilterName,
} from '../../clc/core/instanceTypes.js';
import { INSTANCE_TYPE_PAGE_ORDER } from '../../clc/core/pageOrders.js';
import { takePage } from '../../clc/core/paging.js';
import type { MatrixRowLike } from '../../clc/core/matrixText.js';
import { DEFAULT_VM_TYPES, type VmType } from '../../shared/model/vmTypes.js';
import { filterTableTests, type FilterRow } from './filterTable.js';

const ALL = [
  'm1.small', 't1.micro', 'm1.medium', 'c1.medium', 'm1.large', 'm1.xlarge', 'c1.xlarge', 'm2.xlarge', 'm3.xlarge',
  'm2.2xlarge', 'm3.2xlarge', 'cc1.4xlarge', 'm2.4xlarge', 'hi1.4xlarge', 'cc2.8xlarge', 'cg1.4xlarge', 'cr1.8xlarge',
];

const namesOf = (types: readonly VmType[]): string[] => types.map((t) => t.name);

describe('order', () => {
  it('lists the default table in Eucalyptus 4\'s order: disk, memory, cores, name', () => {
    expect(namesOf([...DEFAULT_VM_TYPES].sort(compareVmTypes))).toEqual(ALL);
  });
});

describe('diskSizeInGB', () => {
  it.each([[0, 0], [1, 1], [5, 5], [10, 10], [15, 16], [30, 32], [60, 64], [120, 128], [200, 214], [240, 257], [1000, 1073]])(
    '%i GiB holds at least %i GB', (gib, gb) => {
      expect(diskSizeInGB(gib)).toBe(gb);
      expect(gb * 1e9).toBeLessThanOrEqual(gib * 2 ** 30);
      expect((gb + 1) * 1e9).toBeGreaterThan(gib * 2 ** 30);
    },
  );
});

describe('filters', () => {
  const f = (name: InstanceTypeFilterName, ...values: string[]): InstanceTypeFilter => ({ name, values });
  const select = (filters: InstanceTypeFilter[]): string[] => {
    const r = selectInstanceTypes(DEFAULT_VM_TYPES, { names: [], filters });
    if (!r.ok) throw new Error('unexpected unknown names');
    return namesOf(r.types);
  };
  const rows: FilterRow<InstanceTypeFilter>[] = [
    ['instance-type with a wildcard', [f('instance-type', 'm1.*')], ['m1.small', 'm1.medium', 'm1.large', 'm1.xlarge']],
    ['instance-type exact, case-sensitive', [f('instance-type', 'M1.SMALL', 'c1.medium')], ['c1.medium']],
    ['vCPUs', [f('vcpu-info.default-vcpus', '16')], ['cc2.8xlarge', 'cg1.4xlarge', 'cr1.8xlarge']],
    ['memory', [f('memory-info.size-in-mib', '6144')], ['hi1.4xlarge', 'cc2.8xlarge']],
    ['total storage is in GB: 15 GiB is 16 GB', [f('instance-storage-info.total-size-in-gb', '16')], ['m3.xlarge']],
    ['no type has 15 GB', [f('instance-storage-info.total-size-in-gb', '15')], []],
    ['disk size', [f('instance-storage-info.disk.size-in-gb', '257')], ['cr1.8xlarge']],
    ['one disk each', [f('instance-storage-info.disk.count', '1')], ALL],
    ['never two disks', [f('instance-storage-info.disk.count', '2')], []],
    ['values OR-ed, filters AND-ed', [f('vcpu-info.default-vcpus', '4', '8'), f('memory-info.size-in-mib', '4096')], ['m3.2xlarge', 'm2.4xlarge']],
    ['every type is current generation', [f('current-generation', 'true')], ALL],
    ['none is of an older one', [f('current-generation', 'false')], []],
    ['none is free tier', [f('free-tier-eligible', 'true')], []],
    ['none is bare metal', [f('bare-metal', 'false')], ALL],
    ['none bursts', [f('burstable-performance-supported', 'true')], []],
    ['none hibernates', [f('hibernation-supported', 'false')], ALL],
    ['every type has instance storage', [f('instance-storage-supported', 'true')], ALL],
    ['on demand only', [f('supported-usage-class', 'spot')], []],
    ['instance-store roots', [f('supported-root-device-type', 'instance-store')], ALL],
    ['hvm', [f('supported-virtualization-type', 'paravirtual', 'hvm')], ALL],
    ['x86_64', [f('processor-info.supported-architecture', 'arm64')], []],
    ['no network interface', [f('network-info.maximum-network-interfaces', '0')], ALL],
    ['a pattern on a number: 256 and 2048', [f('memory-info.size-in-mib', '2*')], ['m1.small', 't1.micro', 'c1.xlarge', 'm2.xlarge', 'm3.xlarge']],
  ];
  filterTableTests(rows, select, INSTANCE_TYPE_FILTER_NAMES);

  it.each([
    ['current-generation', 'True', 'expected true or false'],
    ['current-generation', 'yes', 'expected true or false'],
    ['vcpu-info.default-vcpus', 'two', 'expected a whole number'],
    ['memory-info.size-in-mib', '-1', 'expected a whole number'],
    ['memory-info.size-in-mib', '\\*', 'expected a whole number'],
    ['supported-usage-class', 'On-Demand', 'expected one of on-demand, spot'],
    ['processor-info.supported-architecture', 'amd64', 'expected one of i386, x86_64, arm64, x86_64_mac, arm64_mac'],
  ] as [InstanceTypeFilterName, string, string][])('%s=%s is refused: %s', (name, value, why) => {
    expect(invalidInstanceTypeFilterValue(name, value)).toBe(why);
  });

  it.each([
    ['current-generation', 'false'], ['current-generation', 't*'], ['vcpu-info.default-vcpus', '1?'], ['supported-usage-class', 'spot'],
    ['instance-type', 'anything at all'], ['memory-info.size-in-mib', '512'],
  ] as [InstanceTypeFilterName, string][])('%s=%s is a value the filter can take', (name, value) => {
    expect(invalidInstanceTypeFilterValue(name, value)).toBeUndefined();
  });
});

describe('selectInstanceTypes', () => {
  it('named types, in the table\'s order whatever the order asked', () => {
    const r = selectInstanceTypes(DEFAULT_VM_TYPES, { names: ['cr1.8xlarge', 't1.micro', 'm1.small'], filters: [] });
    expect(r.ok && namesOf(r.types)).toEqual(['m1.small', 't1.micro', 'cr1.8xlarge']);
  });

  it('names and filters together', () => {
    const r = selectInstanceTypes(DEFAULT_VM_TYPES, { names: ['m1.small', 'c1.medium'], filters: [{ name: 'vcpu-info.default-vcpus', values: ['2'] }] });
    expect(r.ok && namesOf(r.types)).toEqual(['c1.medium']);
  });

  it('every unknown name, in the order asked, and nothing selected', () => {
    expect(selectInstanceTypes(DEFAULT_VM_TYPES, { names: ['x1.huge', 'm1.small', 'M1.SMALL'], filters: [] })).toEqual({ ok: false, unknown: ['x1.huge', 'M1.SMALL'] });
  });
});

describe('capacityByType', () => {
  const row = (vmType: string, available: number, max: number): MatrixRowLike => ({ vmType, available, max, cores: 1, memoryMiB: 1, diskGiB: 1 });
  const types = DEFAULT_VM_TYPES.filter((t) => t.name === 'm1.small' || t.name === 'c1.medium');

  it('each type\'s zones in the order they answered', () => {
    const byType = capacityByType(types, new Map([
      ['cluster02', [row('m1.small', 3, 8), row('c1.medium', 1, 4)]],
      ['cluster01', [row('m1.small', 0, 8), row('c1.medium', 0, 4)]],
    ]));
    expect(byType.get('m1.small')).toEqual([{ zoneName: 'cluster02', available: 3, max: 8 }, { zoneName: 'cluster01', available: 0, max: 8 }]);
    expect(byType.get('c1.medium')).toEqual([{ zoneName: 'cluster02', available: 1, max: 4 }, { zoneName: 'cluster01', available: 0, max: 4 }]);
  });

  it('a zone that did not answer is absent, not zero; rows of types not asked are ignored', () => {
    const byType = capacityByType(types, new Map([['cluster01', [row('m1.small', 2, 8), row('x1.huge', 9, 9)]]]));
    expect(byType.get('m1.small')).toEqual([{ zoneName: 'cluster01', available: 2, max: 8 }]);
    expect(byType.get('c1.medium')).toEqual([]);
    expect(byType.has('x1.huge')).toBe(false);
  });

  it('per type, the zones\' figures are exactly the matrices\' rows, each zone once', () => {
    const zones = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}[0-9]{0,2}$/), { maxLength: 5 });
    fc.assert(fc.property(zones, fc.array(fc.tuple(fc.nat(500), fc.nat(500)), { minLength: 50, maxLength: 50 }), (names, figures) => {
      const matrices = new Map(names.map((z, zi) => [z, types.map((t, ti) => {
        const [a, b] = figures[(zi * types.length + ti) % figures.length] ?? [0, 0];
        return row(t.name, Math.min(a, b), Math.max(a, b));
      })]));
      const byType = capacityByType(types, matrices);
      for (const t of types) {
        const got = byType.get(t.name) ?? [];
        expect(got.map((z) => z.zoneName)).toEqual(names);
        const rows = [...matrices.values()].flat().filter((r) => r.vmType === t.name);
        expect(got.reduce((s, z) => s + z.available, 0)).toBe(rows.reduce((s, r) => s + r.available, 0));
        expect(got.reduce((s, z) => s + z.max, 0)).toBe(rows.reduce((s, r) => s + r.max, 0));
      }
    }));
  });
});

describe('paging in INSTANCE_TYPE_PAGE_ORDER', () => {
  const vmType = fc.record({
    name: fc.stringMatching(/^[a-z]{1,3}[0-9]\.[a-z0-9]{1,6}$/),
    cores: fc.integer({ min: 1, max: 32 }),
    memoryMiB: fc.integer({ min: 1, max: 8192 }),
    diskGiB: fc.integer({ min: 1, max: 300 }),
  });
  const table = fc.uniqueArray(vmType, { selector: (t) => t.name, maxLength: 60 });

  it('a walk of any page size serves every type once, in order, through cursors sent as JSON', () => {
    fc.assert(fc.property(table, fc.integer({ min: 5, max: 100 }), (types, size) => {
      const sorted = [...types].sort(compareVmTypes);
      const seen: string[] = [];
      let cursor: VmType | undefined;
      for (let pages = 0; pages <= types.length; pages++) {
        const page = takePage(sorted, INSTANCE_TYPE_PAGE_ORDER, cursor, size);
        seen.push(...page.items.map((t) => t.name));
        if (page.next === undefined) break;
        expect(page.items).toHaveLength(size);
        cursor = INSTANCE_TYPE_PAGE_ORDER.readKey(JSON.parse(JSON.stringify(INSTANCE_TYPE_PAGE_ORDER.writeKey(page.next))));
        expect(cursor).toBeDefined();
      }
      expect(seen).toEqual(namesOf(sorted));
    }));
  });

  it.each([[null], ['m1.small'], [[5, 256, 1]], [[5, 256, 1, 7]], [{ name: 'm1.small' }]])('readKey refuses %j', (json) => {
    expect(INSTANCE_TYPE_PAGE_ORDER.readKey(json)).toBeUndefined();
  });
});
