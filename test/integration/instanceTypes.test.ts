/**
 * DescribeInstanceTypes with the real clients, against a cloud of real processes on 127.0.47.0/24:
 * boto3 (its call and paginator) and the aws CLI (Debian's, default settings, as in
 * realClients.test.ts), euca2ools 3's euca-describe-instance-types rebuilt from its source
 * (test/clients/eucaInstanceTypes.ts over requestbuilder.ts) and Ferry's own command. The capacity
 * figures are checked against euca-describe-availability-zones verbose, a zone whose CC is down is
 * reported rather than counted as zero, and each bad input gets its coded error and changes nothing.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsCli, awsToolEnv, boto3, boto3Ok, sourceCredentials, type Boto3Result, type Boto3Step } from '../clients/awsTools.js';
import { EUCA2OOLS_USER_AGENT, euca2oolsEc2 } from '../clients/eucaCommands.js';
import { describeInstanceTypes, readInstanceTypes } from '../clients/eucaInstanceTypes.js';
import { get, list } from '../clients/listDelimitedXml.js';
import { RequestbuilderSession, ToolServerError, type Credentials } from '../clients/requestbuilder.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, hypervisorDomains } from '../helpers/cloudApi.js';
import { verboseFigures } from '../helpers/verboseZones.js';

const cloud = new TestCloud(47, 2);
const ORIGIN = new URL(cloud.url).origin;
const ZONE = 'cluster01';
const ALL = [
  'm1.small', 't1.micro', 'm1.medium', 'c1.medium', 'm1.large', 'm1.xlarge', 'c1.xlarge', 'm2.xlarge', 'm3.xlarge',
  'm2.2xlarge', 'm3.2xlarge', 'cc1.4xlarge', 'm2.4xlarge', 'hi1.4xlarge', 'cc2.8xlarge', 'cg1.4xlarge', 'cr1.8xlarge',
];

let env: NodeJS.ProcessEnv;
let creds: Credentials;
const sessions: RequestbuilderSession[] = [];

const call = (op: string, args: Record<string, unknown> = {}): Boto3Step => ({ call: op, args });
const ok = (step: Boto3Step): Promise<any> => boto3Ok(env, cloud.url, step);
const aws = (...args: string[]) => awsCli(env, cloud.url, args);
const typeNames = (r: any): string[] => (r?.InstanceTypes ?? []).map((t: any) => t.InstanceType as string);

/** euca2ools pointed at the cloud as its shipped config does: region `localhost`, `.../services/compute/`. */
function euca2ools(): { session: RequestbuilderSession; ec2: ReturnType<typeof euca2oolsEc2> } {
  const session = new RequestbuilderSession(creds, EUCA2OOLS_USER_AGENT);
  sessions.push(session);
  return { session, ec2: euca2oolsEc2(`${ORIGIN}/services/compute/`, 'localhost') };
}

/** Ferry's own command, built, with the cloud's credentials. */
async function ferryCli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin', 'euca-describe-instance-types'), ...args], { env: cloud.cliEnv() });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** `type zone` → `available/max` from euca-describe-availability-zones verbose. */
async function verboseMatrix(): Promise<Map<string, string>> {
  return verboseFigures(arr<any>((await adminCall(cloud, { Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose' })).availabilityZoneInfo?.item));
}

/** The CLC's instance records and the hypervisors' domains: what a bad request must not change. */
async function holdings(): Promise<string> {
  const r = await adminCall(cloud, { Action: 'DescribeInstances' });
  const records = arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item)).map((i) => `${i.instanceId} ${i.instanceState.name}`);
  const domains = (await Promise.all(cloud.nodeHosts.map((h) => hypervisorDomains(cloud, h)))).flat().map((d) => `${d.id} ${d.state}`);
  return JSON.stringify([records.sort(), domains.sort()]);
}

function expectCoded(r: Boto3Result, code: string, status: number): void {
  expect(r.error?.code, JSON.stringify(r)).toBe(code);
  expect(r.error?.status).toBe(status);
}

beforeAll(async () => {
  await cloud.start();
  // Three m1.small take room, so used / total is not all zeros.
  await adminCall(cloud, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '3', MaxCount: '3' });
  const sourced = await sourceCredentials(cloud.credentialsFile());
  env = awsToolEnv(sourced, join(cloud.baseDir, 'home'));
  creds = { accessKey: sourced.AWS_ACCESS_KEY_ID ?? sourced.EC2_ACCESS_KEY ?? '', secretKey: sourced.AWS_SECRET_ACCESS_KEY ?? sourced.EC2_SECRET_KEY ?? '' };
});
afterAll(async () => {
  for (const s of sessions) s.close();
  await cloud.destroy();
});

describe('boto3 and the aws CLI: EC2\'s DescribeInstanceTypes', () => {
  it('describe_instance_types: every type, with the fields an SDK user reads; the Eucalyptus set is not in its way', async () => {
    const r = await ok(call('describe_instance_types'));
    expect(Object.keys(r).sort()).toEqual(['InstanceTypes', 'ResponseMetadata']);
    expect(typeNames(r)).toEqual(ALL);
    expect(r.InstanceTypes.find((t: any) => t.InstanceType === 'm3.xlarge')).toEqual({
      InstanceType: 'm3.xlarge', CurrentGeneration: true, FreeTierEligible: false,
      SupportedUsageClasses: ['on-demand'], SupportedRootDeviceTypes: ['instance-store'], SupportedVirtualizationTypes: ['hvm'],
      BareMetal: false, ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
      VCpuInfo: { DefaultVCpus: 4 }, MemoryInfo: { SizeInMiB: 2048 },
      InstanceStorageSupported: true, InstanceStorageInfo: { TotalSizeInGB: 16, Disks: [{ SizeInGB: 16, Count: 1 }] },
      NetworkInfo: { MaximumNetworkInterfaces: 0 },
      HibernationSupported: false, BurstablePerformanceSupported: false, DedicatedHostsSupported: false,
    });
  });

  it('InstanceTypes and Filters as boto3 sends them; the paginator walks every type once', async () => {
    const [named, pages, filteredPages] = await boto3(env, cloud.url, [
      call('describe_instance_types', { InstanceTypes: ['cc2.8xlarge', 'm1.small', 'c1.medium'], Filters: [{ Name: 'vcpu-info.default-vcpus', Values: ['1', '2'] }] }),
      { paginate: 'describe_instance_types', config: { PageSize: 5 } },
      { paginate: 'describe_instance_types', args: { Filters: [{ Name: 'memory-info.size-in-mib', Values: ['2048', '4096'] }] }, config: { PageSize: 5 } },
    ]);
    expect(typeNames(named?.response)).toEqual(['m1.small', 'c1.medium']);
    expect(pages?.pages?.map((p: any) => typeNames(p).length)).toEqual([5, 5, 5, 2]);
    expect(pages?.pages?.flatMap(typeNames)).toEqual(ALL);
    expect(filteredPages?.pages?.map(typeNames)).toEqual([['c1.xlarge', 'm2.xlarge', 'm3.xlarge', 'm2.2xlarge', 'm3.2xlarge'], ['m2.4xlarge']]);
  });

  it('the aws CLI: all, by name, by filter, --page-size, --max-items and --starting-token, --query', async () => {
    const all = await aws('describe-instance-types');
    expect(all.code, all.stderr).toBe(0);
    expect(typeNames(all.json)).toEqual(ALL);
    expect(typeNames((await aws('describe-instance-types', '--instance-types', 't1.micro', 'm1.small')).json)).toEqual(['m1.small', 't1.micro']);
    const storage = await aws('describe-instance-types', '--filters', 'Name=instance-storage-info.total-size-in-gb,Values=16,32');
    expect(typeNames(storage.json)).toEqual(['m3.xlarge', 'm2.2xlarge', 'm3.2xlarge']);
    expect(typeNames((await aws('describe-instance-types', '--page-size', '5')).json)).toEqual(ALL);
    const first = await aws('describe-instance-types', '--max-items', '7');
    expect(typeNames(first.json)).toEqual(ALL.slice(0, 7));
    const rest = await aws('describe-instance-types', '--starting-token', first.json.NextToken as string);
    expect(typeNames(rest.json)).toEqual(ALL.slice(7));
    const q = await aws('describe-instance-types', '--query', 'InstanceTypes[?VCpuInfo.DefaultVCpus==`16`].InstanceType', '--output', 'text');
    expect(q.stdout.trim().split(/\s+/)).toEqual(['cc2.8xlarge', 'cg1.4xlarge', 'cr1.8xlarge']);
  });

  it('bad input gets its coded error and changes nothing', async () => {
    const before = await holdings();
    const [unknown, filter, token, dry] = await boto3(env, cloud.url, [
      call('describe_instance_types', { InstanceTypes: ['x1.huge', 'm1.small'] }),
      call('describe_instance_types', { Filters: [{ Name: 'hypervisor', Values: ['nitro'] }] }),
      call('describe_instance_types', { NextToken: 'bogus' }),
      call('describe_instance_types', { DryRun: true }),
    ]) as [Boto3Result, Boto3Result, Boto3Result, Boto3Result];
    expectCoded(unknown, 'InvalidInstanceType', 400);
    expect(unknown.error?.message).toContain('[x1.huge]');
    expectCoded(filter, 'InvalidParameterValue', 400);
    expectCoded(token, 'InvalidPaginationToken', 400);
    expectCoded(dry, 'DryRunOperation', 412);
    const cli = await aws('describe-instance-types', '--filters', 'Name=current-generation,Values=True');
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('(InvalidParameterValue)');
    expect(await holdings()).toBe(before);
  });
});

describe('euca2ools 3: euca-describe-instance-types', () => {
  it('sends InstanceType.N and Availability=false, and reads name, CPUs, memory, disk and NICs', async () => {
    const { session, ec2 } = euca2ools();
    const r = await describeInstanceTypes(session, ec2, ['m1.small', 'cr1.8xlarge']);
    expect(r.sent[0]?.params).toEqual({ 'InstanceType.1': 'm1.small', 'InstanceType.2': 'cr1.8xlarge', Availability: 'false', Action: 'DescribeInstanceTypes', Version: '2015-10-01' });
    expect(readInstanceTypes(r.result, false).types).toEqual([
      { name: 'm1.small', cpu: '1', memory: '256', disk: '5', nics: '0', available: 0, max: 0 },
      { name: 'cr1.8xlarge', cpu: '16', memory: '16384', disk: '240', nics: '0', available: 0, max: 0 },
    ]);
  });

  it('--show-capacity and --by-zone: the figures of availability-zones verbose; Ferry\'s command prints the same used / total', async () => {
    const { session, ec2 } = euca2ools();
    const verbose = await verboseMatrix();
    const capacity = await describeInstanceTypes(session, ec2, [], { showCapacity: true });
    expect(capacity.sent[0]?.params.Availability).toBe('true');
    const totals = readInstanceTypes(capacity.result, true);
    expect(totals.types.map((t) => t.name)).toEqual(ALL);
    expect(new Map(totals.types.map((t) => [`${t.name} ${ZONE}`, `${t.available}/${t.max}`]))).toEqual(verbose);
    const small = totals.types.find((t) => t.name === 'm1.small');
    expect((small?.max ?? 0) - (small?.available ?? 0)).toBeGreaterThanOrEqual(3);

    const byZone = await describeInstanceTypes(session, ec2, [], { byZone: true });
    expect(Object.keys(byZone.sent[0]?.params ?? {})).not.toContain('by_zone');
    expect([...readInstanceTypes(byZone.result, true).zones.keys()]).toEqual([ZONE]);

    const ferry = await ferryCli(['--show-capacity']);
    expect([ferry.code, ferry.stderr]).toEqual([0, '']);
    const rows = ferry.stdout.trim().split('\n').slice(1).map((l) => l.replace(/^INSTANCETYPE\t/, '').trim().split(/\s+/));
    expect(rows.map((c) => [c[0], `${c[5]}/${c[7]}`])).toEqual(totals.types.map((t) => [t.name, `${t.max - t.available}/${t.max}`]));
  });

  it('an unknown type is the tool\'s error with EC2\'s code', async () => {
    const { session, ec2 } = euca2ools();
    const err = await describeInstanceTypes(session, ec2, ['x1.huge']).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ToolServerError);
    expect([(err as ToolServerError).status, (err as ToolServerError).code]).toEqual([400, 'InvalidInstanceType']);
  });
});

describe('a zone whose CC does not answer', () => {
  it('is named, not counted as zero; the type table still answers without it', async () => {
    await cloud.crash('cc');
    const { session, ec2 } = euca2ools();
    const r = await describeInstanceTypes(session, ec2, ['m1.small'], { showCapacity: true });
    expect(r.sent).toHaveLength(1);
    expect(list(get(list(r.result.instanceTypeDetails)[0], 'availability'))).toEqual([]);
    const raw = await adminCall(cloud, { Action: 'DescribeInstanceTypes', 'InstanceType.1': 'm1.small', Availability: 'true' });
    expect(arr<any>(raw.unavailablePartitionSet?.item).map((u) => u.partition)).toEqual([ZONE]);

    const ferry = await ferryCli(['m1.small', '--show-capacity']);
    expect(ferry.code).toBe(0);
    expect(ferry.stderr).toMatch(new RegExp(`^warning: partition ${ZONE} did not answer; its capacity is not counted`));

    expect(typeNames(await ok(call('describe_instance_types', { InstanceTypes: ['m1.small'] })))).toEqual(['m1.small']);
  });
});
