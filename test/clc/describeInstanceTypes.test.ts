/**
 * DescribeInstanceTypes through the HTTP pipeline over fake CCs: both answer shapes (Eucalyptus 4's
 * instanceTypeDetails with availability, EC2's instanceTypeSet), the capacity figures against
 * DescribeAvailabilityZones verbose, a zone that does not answer, paging, and every bad input's code.
 */
import { describe, expect, it } from 'vitest';
import { verboseFigures } from '../helpers/verboseZones.js';
import { errorCode, harness, items, launchRunning, query, type Harness, type QueryReply } from './harness.js';

const ACTION = 'DescribeInstanceTypes';
const ALL = [
  'm1.small', 't1.micro', 'm1.medium', 'c1.medium', 'm1.large', 'm1.xlarge', 'c1.xlarge', 'm2.xlarge', 'm3.xlarge',
  'm2.2xlarge', 'm3.2xlarge', 'cc1.4xlarge', 'm2.4xlarge', 'hi1.4xlarge', 'cc2.8xlarge', 'cg1.4xlarge', 'cr1.8xlarge',
];

async function describeTypes(h: Harness, params: Record<string, string> = {}): Promise<any> {
  const r = await query(h.app, { Action: ACTION, ...params });
  expect(r.status, r.text).toBe(200);
  return r.doc.DescribeInstanceTypesResponse;
}

const detailNames = (body: any): string[] => items(body.instanceTypeDetails).map((t) => t.name);
const infoNames = (body: any): string[] => items(body.instanceTypeSet).map((t) => t.instanceType);

/** `type zone` → `available/max`, as DescribeAvailabilityZones verbose prints them. */
async function verboseMatrix(h: Harness): Promise<Map<string, string>> {
  const r = await query(h.app, { Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose' });
  return verboseFigures(items(r.doc.DescribeAvailabilityZonesResponse.availabilityZoneInfo));
}

describe('both shapes in one answer', () => {
  it('every type of the table, in Eucalyptus 4\'s order, in both sets; no capacity unless asked, and no CC asked', async () => {
    const h = await harness();
    const body = await describeTypes(h);
    expect(detailNames(body)).toEqual(ALL);
    expect(infoNames(body)).toEqual(ALL);
    expect(body.nextToken).toBeUndefined();
    expect(items(body.unavailablePartitionSet)).toEqual([]);
    expect(items(body.instanceTypeDetails).every((t) => t.availability === undefined)).toBe(true);
    expect(h.clusters.calls).toEqual([]);
  });

  it('an EC2 item holds what the table says, and the documented defaults', async () => {
    const h = await harness();
    const body = await describeTypes(h, { 'InstanceType.1': 'm3.xlarge' });
    expect(items(body.instanceTypeSet)).toEqual([{
      instanceType: 'm3.xlarge',
      currentGeneration: 'true',
      freeTierEligible: 'false',
      supportedUsageClasses: { item: 'on-demand' },
      supportedRootDeviceTypes: { item: 'instance-store' },
      supportedVirtualizationTypes: { item: 'hvm' },
      bareMetal: 'false',
      processorInfo: { supportedArchitectures: { item: 'x86_64' } },
      vCpuInfo: { defaultVCpus: '4' },
      memoryInfo: { sizeInMiB: '2048' },
      instanceStorageSupported: 'true',
      // 15 GiB is 16.1 GB.
      instanceStorageInfo: { totalSizeInGB: '16', disks: { item: { sizeInGB: '16', count: '1' } } },
      networkInfo: { maximumNetworkInterfaces: '0' },
      hibernationSupported: 'false',
      burstablePerformanceSupported: 'false',
      dedicatedHostsSupported: 'false',
    }]);
  });

  it('a Eucalyptus item: name, cpu, disk (GiB), memory (MiB), networkInterfaces', async () => {
    const h = await harness();
    const body = await describeTypes(h, { 'InstanceType.1': 'm3.xlarge', Availability: 'false' });
    expect(items(body.instanceTypeDetails)).toEqual([{ name: 'm3.xlarge', cpu: '4', disk: '15', memory: '2048', networkInterfaces: '0' }]);
  });
});

describe('Availability (euca-describe-instance-types --show-capacity)', () => {
  it('each type\'s free / max in every zone: the figures of DescribeAvailabilityZones verbose', async () => {
    const h = await harness();
    await launchRunning(h, 'cluster01', 'm1.large', 3);
    const body = await describeTypes(h, { Availability: 'TRUE' });
    const verbose = await verboseMatrix(h);
    const seen = new Map<string, string>();
    for (const t of items(body.instanceTypeDetails)) {
      const zones = items(t.availability);
      expect(zones.map((z) => z.zoneName)).toEqual(['cluster01', 'cluster02']);
      for (const z of zones) {
        expect(z.name).toBe(t.name);
        seen.set(`${t.name} ${z.zoneName}`, `${z.available}/${z.max}`);
      }
    }
    expect(seen).toEqual(verbose);
    // Three m1.large (2 cores each) took 6 of cluster01's 8 cores.
    expect(seen.get('m1.large cluster01')).toBe('1/4');
    expect(seen.get('m1.large cluster02')).toBe('4/4');
    expect(items(body.unavailablePartitionSet)).toEqual([]);
  });

  it('a zone whose CC does not answer is named in unavailablePartitionSet and left out of availability, not counted as zero', async () => {
    const h = await harness();
    h.clusters.down.add('cluster02');
    const body = await describeTypes(h, { Availability: 'true', 'InstanceType.1': 'm1.small' });
    expect(items(items(body.instanceTypeDetails)[0].availability)).toEqual([{ name: 'm1.small', zoneName: 'cluster01', max: '8', available: '8' }]);
    expect(items(body.unavailablePartitionSet)).toEqual([{ partition: 'cluster02', reason: expect.stringContaining('unreachable') }]);
  });

  it('with every zone down, each type has an empty availability and every zone is named', async () => {
    const h = await harness();
    h.clusters.down.add('cluster01');
    h.clusters.down.add('cluster02');
    const body = await describeTypes(h, { Availability: 'true', 'InstanceType.1': 'm1.small' });
    expect(items(body.instanceTypeDetails)[0].availability).toBe('');
    expect(items(body.unavailablePartitionSet).map((u) => u.partition)).toEqual(['cluster01', 'cluster02']);
  });

  it('asks the CCs for the page\'s types only, and not at all when nothing is selected', async () => {
    const h = await harness();
    await describeTypes(h, { Availability: 'true', MaxResults: '5' });
    expect(h.clusters.calls.map((c) => [c.partition, c.op, (c.req as { vmTypes: { name: string }[] }).vmTypes.map((t) => t.name)])).toEqual([
      ['cluster01', 'ccDescribeResources', ALL.slice(0, 5)], ['cluster02', 'ccDescribeResources', ALL.slice(0, 5)],
    ]);
    h.clusters.calls.length = 0;
    const none = await describeTypes(h, { Availability: 'true', 'Filter.1.Name': 'supported-usage-class', 'Filter.1.Value.1': 'spot' });
    expect(none.instanceTypeDetails).toBe('');
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('InstanceType.N and filters', () => {
  it('names (repeats once) and filters together', async () => {
    const h = await harness();
    const body = await describeTypes(h, {
      'InstanceType.1': 'cr1.8xlarge', 'InstanceType.2': 'm1.small', 'InstanceType.3': 'cr1.8xlarge', 'InstanceType.4': 'cc2.8xlarge',
      'Filter.1.Name': 'vcpu-info.default-vcpus', 'Filter.1.Value.1': '16',
    });
    expect(infoNames(body)).toEqual(['cc2.8xlarge', 'cr1.8xlarge']);
    expect(detailNames(body)).toEqual(['cc2.8xlarge', 'cr1.8xlarge']);
  });

  it('filters as the aws CLI sends them', async () => {
    const h = await harness();
    const body = await describeTypes(h, {
      'Filter.1.Name': 'memory-info.size-in-mib', 'Filter.1.Value.1': '4096', 'Filter.1.Value.2': '6144',
      'Filter.2.Name': 'instance-storage-info.total-size-in-gb', 'Filter.2.Value.1': '1*',
    });
    expect(infoNames(body)).toEqual(['hi1.4xlarge', 'cc2.8xlarge']);
  });
});

describe('paging (MaxResults 5 to 100, NextToken)', () => {
  async function walk(h: Harness, params: Record<string, string>): Promise<string[][]> {
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const body = await describeTypes(h, { ...params, ...(token !== undefined ? { NextToken: token } : {}) });
      expect(detailNames(body)).toEqual(infoNames(body));
      pages.push(infoNames(body));
      token = body.nextToken;
    } while (token !== undefined && pages.length < 10);
    return pages;
  }

  it('walks every type once, both sets on the same page', async () => {
    const h = await harness();
    expect(await walk(h, { MaxResults: '5' })).toEqual([ALL.slice(0, 5), ALL.slice(5, 10), ALL.slice(10, 15), ALL.slice(15)]);
    expect(await walk(h, { MaxResults: '100' })).toEqual([ALL]);
  });

  it('an empty NextToken is the first page; a token goes with the same names and filters only', async () => {
    const h = await harness();
    const first = await describeTypes(h, { MaxResults: '5', NextToken: '' });
    expect(infoNames(first)).toEqual(ALL.slice(0, 5));
    const rest = await describeTypes(h, { NextToken: first.nextToken, Availability: 'true' });
    expect(infoNames(rest)).toEqual(ALL.slice(5));
    const other = await query(h.app, { Action: ACTION, NextToken: first.nextToken, 'Filter.1.Name': 'instance-type', 'Filter.1.Value.1': '*' });
    expect([other.status, errorCode(other)]).toEqual([400, 'InvalidPaginationToken']);
    const cross = await query(h.app, { Action: 'DescribeInstances', NextToken: first.nextToken });
    expect(errorCode(cross)).toBe('InvalidPaginationToken');
  });
});

describe('bad input: a coded error, nothing asked of the CCs, nothing written', () => {
  const cases: [string, Record<string, string>, number, string, string][] = [
    ['an unknown type, named with every other', { 'InstanceType.1': 'x1.huge', 'InstanceType.2': 'm1.small', 'InstanceType.3': 'M1.SMALL' }, 400, 'InvalidInstanceType',
      'The following supplied instance types do not exist: [x1.huge, M1.SMALL]'],
    ['an empty type name', { 'InstanceType.1': '' }, 400, 'InvalidParameterValue', 'InstanceType.1'],
    ['101 type names', Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`InstanceType.${i + 1}`, 'm1.small'])), 400, 'InvalidParameterValue', 'at most 100'],
    ['an unknown filter', { 'Filter.1.Name': 'hypervisor', 'Filter.1.Value.1': 'nitro' }, 400, 'InvalidParameterValue', 'known filters: instance-type'],
    ['a filter value no type can have', { 'Filter.1.Name': 'current-generation', 'Filter.1.Value.1': 'True' }, 400, 'InvalidParameterValue', 'Filter.1.Value.1'],
    ['a filter without values', { 'Filter.1.Name': 'instance-type' }, 400, 'MissingParameter', 'Filter.1.Value.1'],
    ['MaxResults below EC2\'s 5', { MaxResults: '4' }, 400, 'InvalidParameterValue', 'at least 5'],
    ['MaxResults above EC2\'s 100 for this action', { MaxResults: '101' }, 400, 'InvalidParameterValue', 'at most 100'],
    ['a NextToken this cloud did not issue', { NextToken: 'abc.def' }, 400, 'InvalidPaginationToken', 'not issued by this cloud'],
    ['Availability other than true/false', { Availability: 'yes' }, 400, 'InvalidParameterValue', 'Availability'],
    ['Eucalyptus\'s Verbose (ephemeral disks), which Ferry\'s types do not have', { Verbose: 'true' }, 400, 'UnknownParameter', 'Verbose'],
    ['DryRun on a valid request', { DryRun: 'true', Availability: 'true' }, 412, 'DryRunOperation', 'DryRun flag'],
    ['DryRun on an invalid one gets that one\'s code', { DryRun: 'true', 'InstanceType.1': 'm1.small', MaxResults: '1' }, 400, 'InvalidParameterValue', 'MaxResults'],
  ];

  it.each(cases)('%s', async (_n, params, status, code, says) => {
    const h = await harness();
    const before = JSON.stringify(h.store.read());
    const r: QueryReply = await query(h.app, { Action: ACTION, ...params });
    expect([r.status, errorCode(r)], r.text).toEqual([status, code]);
    expect(r.doc.Response.Errors.Error.Message).toContain(says);
    expect(h.clusters.calls).toEqual([]);
    expect(JSON.stringify(h.store.read())).toBe(before);
  });

  it('DryRun=false is an ordinary request', async () => {
    const h = await harness();
    expect(infoNames(await describeTypes(h, { DryRun: 'false', 'InstanceType.1': 't1.micro' }))).toEqual(['t1.micro']);
  });
});
