/**
 * Issue 14's real-clients suite, part one: boto3 / botocore (Debian python3-boto3) and the aws CLI
 * (Debian awscli) against a cloud of real processes on 127.0.43.0/24, with their default settings:
 * credentials sourced from the CLC's admin.credentials, `endpoint_url` / `--endpoint-url` the CLC,
 * nothing else configured. botocore's own idempotency tokens, paginators, waiters and retries do
 * the work (test/clients/boto3_steps.py only watches its HTTP attempts). Every bad input gets its
 * coded error and changes nothing: the CLC's instance records and the hypervisors' domains are
 * compared before and after (and, for tags, the CLC's clc.json). euca2ools and the Eucalyptus 4
 * admin tools: eucaTools.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeNodes, hypervisorDomains, runningCopies } from '../helpers/cloudApi.js';
import {
  awsCli, awsToolEnv, boto3, boto3Ok, sourceCredentials, type Boto3Result, type Boto3Step, type CredentialName,
} from '../clients/awsTools.js';

const cloud = new TestCloud(43, 3);
const hosts = cloud.nodeHosts;
const ORIGIN = new URL(cloud.url).origin;
const EUCALYPTUS = cloud.url;
const COMPUTE = `${ORIGIN}/services/compute`;
const EMI = 'emi-0a1b2c3d';
const WAIT_FAST = { Delay: 1, MaxAttempts: 60 };

let sourced: Partial<Record<CredentialName, string>>;
let env: NodeJS.ProcessEnv;

const call = (op: string, args: Record<string, unknown> = {}): Boto3Step => ({ call: op, args });
const ok = (step: Boto3Step, endpoint = EUCALYPTUS): Promise<any> => boto3Ok(env, endpoint, step);
async function one(step: Boto3Step, endpoint = EUCALYPTUS): Promise<Boto3Result> {
  return (await boto3(env, endpoint, [step]))[0] as Boto3Result;
}
const cli = (...args: string[]) => awsCli(env, EUCALYPTUS, args);

const instancesOf = (r: any): any[] => (r?.Reservations ?? []).flatMap((rv: any) => rv.Instances ?? []);
const idsOf = (r: any): string[] => instancesOf(r).map((i) => i.InstanceId as string);
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

/** What the cloud holds, by two independent witnesses: the CLC's instance records and the hypervisors' domains. */
interface Holdings { readonly records: string[]; readonly domains: string[] }
async function holdings(): Promise<Holdings> {
  const r = await adminCall(cloud, { Action: 'DescribeInstances' });
  const records = arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item)).map((i) => i.instanceId as string);
  const domains = (await Promise.all(hosts.map((h) => hypervisorDomains(cloud, h)))).flat().map((d) => d.id);
  return { records: sorted(records), domains: sorted(domains) };
}

/** Instances running now, by the hypervisors: id → host. */
async function runningOn(): Promise<Map<string, string>> {
  const copies = await runningCopies(cloud);
  return new Map([...copies].map(([id, at]) => [id, at[0] as string]));
}

/** Runs `body` (which must fail with a coded error) and checks that nothing changed in the cloud. */
async function changesNothing<T>(body: () => Promise<T>): Promise<T> {
  const before = await holdings();
  const out = await body();
  expect(await holdings()).toEqual(before);
  return out;
}

function expectCoded(r: Boto3Result | undefined, code: string, status?: number): void {
  expect(r?.error, JSON.stringify(r)).toBeDefined();
  expect(r?.error?.code, JSON.stringify(r?.error)).toBe(code);
  if (status !== undefined) expect(r?.error?.status).toBe(status);
}

beforeAll(async () => {
  await cloud.start();
  // Instances to describe, tag, page over and terminate, launched with Ferry's own signer so those
  // checks do not hang on the RunInstances ones.
  await adminCall(cloud, { Action: 'RunInstances', ImageId: EMI, MinCount: '6', MaxCount: '6' });
  sourced = await sourceCredentials(cloud.credentialsFile());
  env = awsToolEnv(sourced, join(cloud.baseDir, 'home'));
});
afterAll(async () => { await cloud.destroy(); });

describe('the credentials an administrator sources', () => {
  it('admin.credentials exports the keys, region and bootstrap URL the AWS tools and euserv-* read', () => {
    expect(sourced.AWS_ACCESS_KEY_ID).toBe(sourced.EC2_ACCESS_KEY);
    expect(sourced.AWS_SECRET_ACCESS_KEY).toBe(sourced.EC2_SECRET_KEY);
    expect(sourced.AWS_ACCESS_KEY_ID).toMatch(/^AKI[A-Z0-9]{17}$/);
    expect(sourced.AWS_DEFAULT_REGION ?? '').not.toBe('');
    const bootstrap = new URL(sourced.EUCA_BOOTSTRAP_URL ?? 'missing:');
    expect(bootstrap.origin).toBe(ORIGIN);
    expect(bootstrap.pathname).toMatch(/^\/services\/Empyrean\/?$/);
  });
});

describe('describes, as boto3 and the aws CLI call them', () => {
  it('DescribeRegions gives one region whose endpoint is this CLC, and a client built on that endpoint works', async () => {
    const r = await ok(call('describe_regions'));
    expect(r.Regions).toHaveLength(1);
    const region = r.Regions[0];
    const endpoint = /^https?:\/\//.test(region.Endpoint) ? region.Endpoint : `http://${region.Endpoint}`;
    expect(new URL(endpoint).origin).toBe(ORIGIN);
    const zones = await ok(call('describe_availability_zones'), endpoint);
    expect(zones.AvailabilityZones.map((z: any) => z.ZoneName)).toEqual(['cluster01']);
    const viaCli = await cli('describe-regions');
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.json.Regions).toEqual(r.Regions);
  });

  it('DescribeAvailabilityZones: plain, by name, and verbose (the resource matrix Eucalyptus admins read)', async () => {
    const [plain, named, verbose] = await boto3(env, EUCALYPTUS, [
      call('describe_availability_zones'),
      call('describe_availability_zones', { ZoneNames: ['cluster01'] }),
      call('describe_availability_zones', { ZoneNames: ['verbose'] }),
    ]);
    expect(plain?.response.AvailabilityZones).toEqual([expect.objectContaining({ ZoneName: 'cluster01', State: 'available' })]);
    expect(named?.response.AvailabilityZones).toEqual(plain?.response.AvailabilityZones);
    const rows = verbose?.response.AvailabilityZones.map((z: any) => `${z.ZoneName}\t${z.State}`);
    expect(rows[0]).toBe('cluster01\tavailable');
    expect(rows).toContain('|- vm types\tfree / max\tcpu\tram\tdisk');
    expect(rows.some((row: string) => /^\|- m1\.small\t\d{4} \/ \d{4}\t1\t256\t5$/.test(row)), rows.join('\n')).toBe(true);
    const viaCli = await cli('describe-availability-zones', '--zone-names', 'verbose');
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.json.AvailabilityZones.map((z: any) => z.ZoneName)).toEqual(verbose?.response.AvailabilityZones.map((z: any) => z.ZoneName));
  });

  it.each([
    ['/services/Eucalyptus', EUCALYPTUS],
    ['/services/compute (euca2ools\' EC2 path)', COMPUTE],
    ['/services/compute/ (with the slash of eucalyptus-admin.ini)', `${COMPUTE}/`],
  ])('answers boto3 and the CLI at %s', async (_name, endpoint) => {
    const zones = await ok(call('describe_availability_zones'), endpoint);
    expect(zones.AvailabilityZones.map((z: any) => z.ZoneName)).toEqual(['cluster01']);
    const viaCli = await awsCli(env, endpoint, ['describe-instances']);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.json.Reservations).toBeInstanceOf(Array);
  });
});

describe('RunInstances and its ClientToken (EC2 idempotency)', () => {
  const token = `ferry-idem-${process.pid}`;
  let original: any;

  it('boto3 sends a ClientToken of its own on every RunInstances, and the launch works', async () => {
    const before = await holdings();
    const r = await one(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1 }));
    expect(r.error, JSON.stringify(r.error)).toBeUndefined();
    expect(r.attempts[0]?.clientToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.response.Instances).toHaveLength(1);
    const after = await holdings();
    expect(after.domains).toEqual(sorted([...before.domains, r.response.Instances[0].InstanceId]));
  });

  it('the same token with the same parameters returns the original reservation and launches nothing', async () => {
    const before = await holdings();
    const [first, again] = await boto3(env, EUCALYPTUS, [
      call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }),
      call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }),
    ]);
    expect(first?.error, JSON.stringify(first?.error)).toBeUndefined();
    expect(again?.error, JSON.stringify(again?.error)).toBeUndefined();
    original = first?.response;
    expect(again?.response.ReservationId).toBe(original.ReservationId);
    // Back to back in one process, usually within one second: then byte-identical, and served all the same.
    if (again?.attempts[0]?.amzDate === first?.attempts[0]?.amzDate) expect(again?.attempts[0]?.authorization).toBe(first?.attempts[0]?.authorization);
    expect(again?.response.Instances.map((i: any) => i.InstanceId)).toEqual(original.Instances.map((i: any) => i.InstanceId));
    const after = await holdings();
    expect(after.domains).toEqual(sorted([...before.domains, original.Instances[0].InstanceId]));
    expect(after.records).toEqual(sorted([...before.records, original.Instances[0].InstanceId]));
  });

  it('the same token with other parameters is IdempotentParameterMismatch and launches nothing', async () => {
    await changesNothing(async () => {
      const [type, count] = await boto3(env, EUCALYPTUS, [
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token, InstanceType: 'm1.medium' }),
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 2, ClientToken: token }),
      ]);
      expectCoded(type, 'IdempotentParameterMismatch', 400);
      expectCoded(count, 'IdempotentParameterMismatch', 400);
    });
  });

  it('a new token is a new reservation', async () => {
    const before = await holdings();
    const r = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: `${token}-2` }));
    expect(r.ReservationId).not.toBe(original.ReservationId);
    expect((await holdings()).domains).toEqual(sorted([...before.domains, r.Instances[0].InstanceId]));
  });

  it('a CLC restart forgets no token', async () => {
    await cloud.restart('clc');
    await changesNothing(async () => {
      const again = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }));
      expect(again.ReservationId).toBe(original.ReservationId);
    });
  });

  it('a token longer than EC2\'s 64 characters is refused and launches nothing', async () => {
    await changesNothing(async () => {
      expectCoded(await one(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: 'x'.repeat(65) })), 'InvalidParameterValue', 400);
    });
  });

  it('aws ec2 run-instances --count 2 launches two; with --client-token twice, one reservation', async () => {
    const before = await holdings();
    const two = await cli('run-instances', '--image-id', EMI, '--count', '2');
    expect(two.code, two.stderr).toBe(0);
    expect(two.json.Instances).toHaveLength(2);
    const cliToken = `${token}-cli`;
    const first = await cli('run-instances', '--image-id', EMI, '--count', '1', '--client-token', cliToken);
    const again = await cli('run-instances', '--image-id', EMI, '--count', '1', '--client-token', cliToken);
    expect(first.code, first.stderr).toBe(0);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.ReservationId).toBe(first.json.ReservationId);
    const launched = [...two.json.Instances, ...first.json.Instances].map((i: any) => i.InstanceId as string);
    expect((await holdings()).domains).toEqual(sorted([...before.domains, ...launched]));
  });
});

describe('DryRun', () => {
  it('answers DryRunOperation (412) to RunInstances, DescribeInstances and TerminateInstances and does nothing', async () => {
    const victim = [...(await runningOn()).keys()][0] as string;
    await changesNothing(async () => {
      const [run, describe, terminate] = await boto3(env, EUCALYPTUS, [
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, DryRun: true }),
        call('describe_instances', { DryRun: true }),
        call('terminate_instances', { InstanceIds: [victim], DryRun: true }),
      ]);
      expectCoded(run, 'DryRunOperation', 412);
      expectCoded(describe, 'DryRunOperation', 412);
      expectCoded(terminate, 'DryRunOperation', 412);
      const viaCli = await cli('run-instances', '--image-id', EMI, '--count', '1', '--dry-run');
      expect(viaCli.code).toBe(254);
      expect(viaCli.stderr).toContain('DryRunOperation');
    });
    expect((await runningOn()).has(victim)).toBe(true);
  });
});

describe('waiters and terminate', () => {
  it('boto3: instance_exists, instance_running, instance_status_ok and system_status_ok after a launch; instance_terminated after TerminateInstances', async () => {
    const launched = await ok(call('run_instances', { ImageId: EMI, MinCount: 2, MaxCount: 2 }));
    const ids = launched.Instances.map((i: any) => i.InstanceId as string);
    const waits = await boto3(env, EUCALYPTUS, ['instance_exists', 'instance_running', 'instance_status_ok', 'system_status_ok']
      .map((wait) => ({ wait, args: { InstanceIds: ids }, config: WAIT_FAST })));
    for (const w of waits) expect(w.waited, JSON.stringify(w)).toBe(true);
    const [terminate, terminated, after] = await boto3(env, EUCALYPTUS, [
      call('terminate_instances', { InstanceIds: ids }),
      { wait: 'instance_terminated', args: { InstanceIds: ids }, config: WAIT_FAST },
      call('describe_instances', { InstanceIds: ids }),
    ]);
    expect(terminate?.error, JSON.stringify(terminate?.error)).toBeUndefined();
    expect(sorted(terminate?.response.TerminatingInstances.map((t: any) => t.InstanceId))).toEqual(sorted(ids));
    for (const t of terminate?.response.TerminatingInstances ?? []) {
      expect(t.PreviousState.Name).toBe('running');
      expect(['shutting-down', 'terminated']).toContain(t.CurrentState.Name);
    }
    expect(terminated?.waited, JSON.stringify(terminated)).toBe(true);
    expect(instancesOf(after?.response).map((i) => i.State.Name)).toEqual(['terminated', 'terminated']);
    const domains = await holdings();
    for (const id of ids) expect(domains.domains).not.toContain(id);
  }, 180_000);

  it('aws ec2 wait instance-running / terminate-instances / wait instance-terminated', async () => {
    const launched = await cli('run-instances', '--image-id', EMI, '--count', '2');
    expect(launched.code, launched.stderr).toBe(0);
    const ids = launched.json.Instances.map((i: any) => i.InstanceId as string);
    const running = await cli('wait', 'instance-running', '--instance-ids', ...ids);
    expect(running.code, running.stderr).toBe(0);
    const terminate = await cli('terminate-instances', '--instance-ids', ...ids);
    expect(terminate.code, terminate.stderr).toBe(0);
    expect(sorted(terminate.json.TerminatingInstances.map((t: any) => t.InstanceId))).toEqual(sorted(ids));
    const terminated = await cli('wait', 'instance-terminated', '--instance-ids', ...ids);
    expect(terminated.code, terminated.stderr).toBe(0);
  }, 180_000);
});

describe('where instances run: the euca:node tag, tag filters and DescribeTags', () => {
  it('every running instance carries euca:node naming the host the hypervisors see it on', async () => {
    const on = await runningOn();
    expect(on.size).toBeGreaterThan(5);
    const r = await ok(call('describe_instances', { Filters: [{ Name: 'instance-state-name', Values: ['running'] }] }));
    const tagged = new Map(instancesOf(r).map((i) => [i.InstanceId as string, (i.Tags ?? []).find((t: any) => t.Key === 'euca:node')?.Value]));
    expect(tagged).toEqual(on);
    for (const i of instancesOf(r)) expect((i.Tags ?? []).map((t: any) => t.Key)).not.toContain('euca:node:migration:destination');
  });

  it('a terminated instance carries no euca:node (Eucalyptus 4 clears it at teardown)', async () => {
    // VmInstances.java:880-882 (eucalyptus/eucalyptus 95e0cef, clc/modules/cluster-manager): clearServiceTag
    // deletes euca:node once the instance is torn down, so euserv-describe-node-controllers lists only live ones.
    const r = await ok(call('describe_instances', { Filters: [{ Name: 'instance-state-name', Values: ['terminated'] }] }));
    expect(instancesOf(r).length, 'the waiter tests above terminated some').toBeGreaterThan(0);
    // System tags only: a terminated instance keeps its user tags while it is listed, as in EC2.
    for (const i of instancesOf(r)) expect((i.Tags ?? []).filter((t: any) => t.Key.startsWith('euca:')), i.InstanceId).toEqual([]);
  });

  it('filters on tag:euca:node, tag-key, instance-id and availability-zone', async () => {
    const on = await runningOn();
    const steps = hosts.map((h) => call('describe_instances', { Filters: [{ Name: 'tag:euca:node', Values: [h] }] }));
    const someId = [...on.keys()][0] as string;
    steps.push(
      call('describe_instances', { Filters: [{ Name: 'tag-key', Values: ['euca:node'] }] }),
      call('describe_instances', { Filters: [{ Name: 'instance-id', Values: [someId] }] }),
      call('describe_instances', { Filters: [{ Name: 'availability-zone', Values: ['cluster01'] }, { Name: 'instance-state-name', Values: ['running'] }] }),
    );
    const results = await boto3(env, EUCALYPTUS, steps);
    hosts.forEach((h, k) => {
      const expected = [...on].filter(([, at]) => at === h).map(([id]) => id);
      expect(sorted(idsOf(results[k]?.response)), `tag:euca:node=${h}: ${JSON.stringify(results[k]?.error)}`).toEqual(sorted(expected));
    });
    const [tagKey, byId, byZone] = results.slice(hosts.length);
    expect(sorted(idsOf(tagKey?.response)), JSON.stringify(tagKey?.error)).toEqual(sorted(on.keys()));
    expect(idsOf(byId?.response)).toEqual([someId]);
    expect(sorted(idsOf(byZone?.response))).toEqual(sorted(on.keys()));
    const viaCli = await cli('describe-instances', '--filters', `Name=tag:euca:node,Values=${hosts[0]}`);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(sorted(idsOf(viaCli.json))).toEqual(sorted(idsOf(results[0]?.response)));
  });

  it('DescribeTags lists euca:node per running instance, and filters on key, value, resource-id and resource-type', async () => {
    const on = await runningOn();
    const someId = [...on.keys()][0] as string;
    const [all, byKey, byValue, byResource, byType] = await boto3(env, EUCALYPTUS, [
      call('describe_tags'),
      call('describe_tags', { Filters: [{ Name: 'key', Values: ['euca:node'] }] }),
      call('describe_tags', { Filters: [{ Name: 'value', Values: [hosts[1]] }] }),
      call('describe_tags', { Filters: [{ Name: 'resource-id', Values: [someId] }] }),
      call('describe_tags', { Filters: [{ Name: 'resource-type', Values: ['instance'] }] }),
    ]);
    const nodeTags = (r: Boto3Result | undefined): Map<string, string> =>
      new Map((r?.response?.Tags ?? []).filter((t: any) => t.Key === 'euca:node').map((t: any) => [t.ResourceId, t.Value]));
    expect(all?.error, JSON.stringify(all?.error)).toBeUndefined();
    for (const t of all?.response.Tags ?? []) expect(t.ResourceType).toBe('instance');
    expect(nodeTags(all)).toEqual(on);
    expect(nodeTags(byKey)).toEqual(on);
    expect(byKey?.response.Tags.every((t: any) => t.Key === 'euca:node')).toBe(true);
    expect(sorted(byValue?.response.Tags.map((t: any) => t.ResourceId))).toEqual(sorted([...on].filter(([, at]) => at === hosts[1]).map(([id]) => id)));
    expect(byResource?.response.Tags).toEqual([{ ResourceId: someId, ResourceType: 'instance', Key: 'euca:node', Value: on.get(someId) }]);
    expect(byType?.response.Tags).toEqual(all?.response.Tags);
    const viaCli = await cli('describe-tags');
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.json.Tags).toEqual(all?.response.Tags);
  });
});

describe('paging: MaxResults / NextToken, the paginators and the CLI', () => {
  let everyId: string[];

  beforeAll(async () => {
    const r = await ok(call('describe_instances'));
    everyId = sorted(idsOf(r));
  });

  it('has more than five instances to page over', () => {
    expect(everyId.length).toBeGreaterThan(5);
  });

  it('boto3\'s describe_instances and describe_tags paginators (PageSize 5) give every item exactly once', async () => {
    const [instancePages, tagPages, allTags] = await boto3(env, EUCALYPTUS, [
      { paginate: 'describe_instances', config: { PageSize: 5 } },
      { paginate: 'describe_tags', config: { PageSize: 5 } },
      call('describe_tags'),
    ]);
    expect(instancePages?.error, JSON.stringify(instancePages?.error)).toBeUndefined();
    const pages = instancePages?.pages ?? [];
    expect(pages.length).toBeGreaterThan(1);
    for (const p of pages) expect(instancesOf(p).length).toBeLessThanOrEqual(5);
    expect(sorted(pages.flatMap(idsOf))).toEqual(everyId);
    expect(tagPages?.error, JSON.stringify(tagPages?.error)).toBeUndefined();
    const tp = tagPages?.pages ?? [];
    expect(tp.length).toBeGreaterThan(1);
    for (const p of tp) expect(p.Tags.length).toBeLessThanOrEqual(5);
    const key = (t: any): string => `${t.ResourceId} ${t.Key}`;
    expect(sorted(tp.flatMap((p: any) => p.Tags.map(key)))).toEqual(sorted(allTags?.response.Tags.map(key)));
  });

  it('DescribeInstanceStatus: boto3\'s paginator (PageSize 5) and the CLI list every running instance exactly once', async () => {
    const running = sorted((await runningOn()).keys());
    const pages = await ok({ paginate: 'describe_instance_status', config: { PageSize: 5 } });
    expect(pages.length).toBeGreaterThan(1);
    expect(sorted(pages.flatMap((p: any) => p.InstanceStatuses.map((st: any) => st.InstanceId)))).toEqual(running);
    for (const p of pages) for (const st of p.InstanceStatuses) expect([st.SystemStatus.Status, st.InstanceStatus.Status]).toEqual(['ok', 'ok']);
    const viaCli = await cli('describe-instance-status', '--page-size', '5');
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(sorted(viaCli.json.InstanceStatuses.map((st: any) => st.InstanceId))).toEqual(running);
  });

  it('MaxResults and NextToken by hand, with and without a filter', async () => {
    const walk = async (filters: unknown[] | undefined): Promise<string[][]> => {
      const pages: string[][] = [];
      let token: string | undefined;
      do {
        const r = await ok(call('describe_instances', { MaxResults: 5, ...(filters ? { Filters: filters } : {}), ...(token ? { NextToken: token } : {}) }));
        pages.push(idsOf(r));
        token = r.NextToken;
        expect(pages.length).toBeLessThan(20);
      } while (token);
      return pages;
    };
    const plain = await walk(undefined);
    expect(plain.length).toBeGreaterThan(1);
    expect(sorted(plain.flat())).toEqual(everyId);
    const running = sorted((await runningOn()).keys());
    const filtered = await walk([{ Name: 'instance-state-name', Values: ['running'] }]);
    expect(sorted(filtered.flat())).toEqual(running);
  });

  it('a bad, altered or foreign NextToken is InvalidPaginationToken and changes nothing', async () => {
    const first = await ok(call('describe_instances', { MaxResults: 5 }));
    const token = first.NextToken as string;
    expect(token).toBeTruthy();
    const altered = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
    await changesNothing(async () => {
      const results = await boto3(env, EUCALYPTUS, [
        call('describe_instances', { MaxResults: 5, NextToken: 'not-a-token' }),
        call('describe_instances', { MaxResults: 5, NextToken: altered }),
        call('describe_instances', { MaxResults: 5, NextToken: token, Filters: [{ Name: 'instance-state-name', Values: ['running'] }] }),
        call('describe_tags', { MaxResults: 5, NextToken: token }),
      ]);
      for (const r of results) expectCoded(r, 'InvalidPaginationToken', 400);
    });
  });

  it('aws ec2 describe-instances --page-size 5, and --max-items 3 then --starting-token', async () => {
    const paged = await cli('describe-instances', '--page-size', '5');
    expect(paged.code, paged.stderr).toBe(0);
    expect(sorted(idsOf(paged.json))).toEqual(everyId);
    const head = await cli('describe-instances', '--page-size', '5', '--max-items', '3');
    expect(head.code, head.stderr).toBe(0);
    // --max-items counts the paginator's result key, Reservations (a page may split one, as EC2's do).
    expect(head.json.Reservations).toHaveLength(3);
    expect(head.json.NextToken).toBeTruthy();
    const rest = await cli('describe-instances', '--page-size', '5', '--starting-token', head.json.NextToken);
    expect(rest.code, rest.stderr).toBe(0);
    expect(sorted([...idsOf(head.json), ...idsOf(rest.json)])).toEqual(everyId);
    const tags = await cli('describe-tags', '--page-size', '5');
    expect(tags.code, tags.stderr).toBe(0);
    expect(tags.json.Tags.length).toBeGreaterThan(5);
  });
});

describe('byte-identical signatures (botocore signs host, x-amz-date and content-type only)', () => {
  it('serves the same signed DescribeInstances sent again within the same second', async () => {
    const results = await boto3(env, EUCALYPTUS, Array.from({ length: 20 }, () => call('describe_instances')));
    for (const r of results) expect(r.error, JSON.stringify(r.error)).toBeUndefined();
    const signatures = results.map((r) => r.attempts[0]?.authorization);
    expect(new Set(signatures).size, 'some calls shared a signature').toBeLessThan(signatures.length);
  });
});

describe('EC2 error codes as botocore sees them; each changes nothing', () => {
  it.each([
    ['an unknown instance', call('describe_instances', { InstanceIds: ['i-00000000'] }), 'InvalidInstanceID.NotFound'],
    ['a malformed instance id', call('describe_instances', { InstanceIds: ['i-xyz'] }), 'InvalidInstanceID.Malformed'],
    ['terminating an unknown instance', call('terminate_instances', { InstanceIds: ['i-00000000'] }), 'InvalidInstanceID.NotFound'],
    ['an image id that is not an emi', call('run_instances', { ImageId: 'ami-12345678', MinCount: 1, MaxCount: 1 }), 'InvalidAMIID.Malformed'],
    ['an unknown instance type', call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, InstanceType: 'm9.huge' }), 'InvalidParameterValue'],
    ['MinCount above MaxCount', call('run_instances', { ImageId: EMI, MinCount: 3, MaxCount: 2 }), 'InvalidParameterCombination'],
    ['an unknown zone', call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, Placement: { AvailabilityZone: 'nowhere' } }), 'InvalidAvailabilityZone'],
    ['an unknown filter', call('describe_instances', { Filters: [{ Name: 'no-such-filter', Values: ['x'] }] }), 'InvalidParameterValue'],
  ])('%s', async (_name, step, code) => {
    await changesNothing(async () => expectCoded(await one(step), code, 400));
  });

  it('an unknown path is UnknownEndpoint as an EC2 XML error (never HTML), for boto3, the CLI and a browser', async () => {
    const nowhere = `${ORIGIN}/services/Nowhere`;
    await changesNothing(async () => {
      const [describe, run] = await boto3(env, nowhere, [call('describe_instances'), call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1 })]);
      expectCoded(describe, 'UnknownEndpoint', 404);
      expectCoded(run, 'UnknownEndpoint', 404);
      const viaCli = await awsCli(env, nowhere, ['run-instances', '--image-id', EMI, '--count', '1']);
      expect(viaCli.code).toBe(254);
      expect(viaCli.stderr).toContain('UnknownEndpoint');
      for (const path of ['/', '/services', '/services/Eucalyptusx', '/favicon.ico']) {
        const res = await fetch(`${ORIGIN}${path}`);
        const text = await res.text();
        expect(res.status, path).toBe(404);
        expect(res.headers.get('content-type'), path).toMatch(/xml/);
        expect(text, path).toContain('<Code>UnknownEndpoint</Code>');
        expect(text.toLowerCase(), path).not.toContain('<html');
      }
    });
  });
});

describe('botocore\'s retries after an honest 503 (the CC is down)', () => {
  it('every retry is served (ServiceUnavailable again, never AuthFailure), and a retried RunInstances launches nothing', async () => {
    const someId = [...(await runningOn()).keys()][0] as string;
    const token = `ferry-retry-${process.pid}`;
    const before = await holdings();
    await cloud.crash('cc');
    try {
      const [describe, run] = await boto3(env, EUCALYPTUS, [
        call('describe_instances', { InstanceIds: [someId] }),
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }),
      ]);
      for (const r of [describe, run]) {
        expectCoded(r, 'ServiceUnavailable', 503);
        expect(r?.error?.retryAttempts).toBe(4);
        expect(r?.attempts.map((a) => `${a.status} ${a.code}`)).toEqual(Array(5).fill('503 ServiceUnavailable'));
      }
      expect(new Set(run?.attempts.map((a) => a.clientToken))).toEqual(new Set([token]));
    } finally {
      await cloud.start(['cc']);
    }
    const deadline = Date.now() + 30_000;
    while ((await describeNodes(cloud)).some((n) => n.state !== 'ENABLED') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await holdings()).toEqual(before);
    // The SDK's next try with the same token, now that the CC answers: launched once.
    const launched = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }));
    const again = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }));
    expect(again.ReservationId).toBe(launched.ReservationId);
    expect((await holdings()).domains).toEqual(sorted([...before.domains, launched.Instances[0].InstanceId]));
  }, 120_000);
});

describe('user tags: CreateTags, DeleteTags and RunInstances\' TagSpecification', () => {
  const OWNER = `owner-${process.pid}`;
  const tagMap = (tags: any[] | undefined): Record<string, string> => Object.fromEntries((tags ?? []).map((t: any) => [t.Key, t.Value]));
  const userTags = (tags: any[] | undefined): Record<string, string> => Object.fromEntries(Object.entries(tagMap(tags)).filter(([k]) => !k.startsWith('euca:')));
  /** What clc.json holds of instances and client tokens: a refused request must not change it. */
  const clcJson = (): unknown => {
    const data = JSON.parse(readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8')).data;
    return { instances: data.instances, runTokens: data.runTokens };
  };
  async function refusedChangingNothing(body: () => Promise<void>): Promise<void> {
    const before = clcJson();
    await changesNothing(body);
    expect(clcJson()).toEqual(before);
  }
  let tagged: string[];

  it('boto3 create_instances(TagSpecifications=...) launches tagged instances, and describe_instances finds exactly them by tag:Owner', async () => {
    const [created] = await boto3(env, EUCALYPTUS, [{
      resource: 'create_instances',
      args: { ImageId: EMI, MinCount: 2, MaxCount: 2, TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'Owner', Value: OWNER }, { Key: 'Project', Value: 'ferry' }] }] },
    }]);
    expect(created?.error, JSON.stringify(created?.error)).toBeUndefined();
    expect(created?.attempts[0]?.clientToken).toMatch(/^[0-9a-f-]{36}$/);
    tagged = sorted(created?.resources.map((r: any) => r.id as string));
    expect(tagged).toHaveLength(2);
    await ok({ wait: 'instance_running', args: { InstanceIds: tagged }, config: WAIT_FAST });
    const on = await runningOn();
    const [byOwner, attribute] = await boto3(env, EUCALYPTUS, [
      call('describe_instances', { Filters: [{ Name: 'tag:Owner', Values: [OWNER] }] }),
      { attribute: 'tags', on: ['Instance', tagged[0] as string] },
    ]);
    expect(sorted(idsOf(byOwner?.response)), JSON.stringify(byOwner?.error)).toEqual(tagged);
    for (const i of instancesOf(byOwner?.response)) {
      expect(tagMap(i.Tags)).toEqual({ Owner: OWNER, Project: 'ferry', 'euca:node': on.get(i.InstanceId) });
    }
    expect(tagMap(attribute?.value), JSON.stringify(attribute)).toEqual({ Owner: OWNER, Project: 'ferry', 'euca:node': on.get(tagged[0] as string) });
    // The client's run_instances answers with the tags too.
    const direct = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'Owner', Value: `${OWNER}-direct` }] }] }));
    expect(userTags(direct.Instances[0].Tags)).toEqual({ Owner: `${OWNER}-direct` });
  }, 120_000);

  it('boto3 create_tags, Instance.create_tags and delete_tags (a key, key=value, every user tag); euca:node stays', async () => {
    const [a, b] = tagged as [string, string];
    const host = (await runningOn()).get(a);
    const resourceTags = (id: string) => call('describe_tags', { Filters: [{ Name: 'resource-id', Values: [id] }] });
    const [create, viaResource, afterCreate] = await boto3(env, EUCALYPTUS, [
      call('create_tags', { Resources: [a], Tags: [{ Key: 'Role', Value: 'db' }, { Key: 'Owner', Value: 'bob' }, { Key: 'Flag' }] }),
      { resource: 'create_tags', on: ['Instance', b], args: { Tags: [{ Key: 'Role', Value: 'web' }] } },
      resourceTags(a),
    ]);
    expect(create?.error, JSON.stringify(create?.error)).toBeUndefined();
    expect(viaResource?.resources, JSON.stringify(viaResource)).toEqual([{ resource_id: b, key: 'Role', value: 'web' }]);
    expect(afterCreate?.response.Tags).toEqual([
      { ResourceId: a, ResourceType: 'instance', Key: 'Flag', Value: '' },
      { ResourceId: a, ResourceType: 'instance', Key: 'Owner', Value: 'bob' },
      { ResourceId: a, ResourceType: 'instance', Key: 'Project', Value: 'ferry' },
      { ResourceId: a, ResourceType: 'instance', Key: 'Role', Value: 'db' },
      { ResourceId: a, ResourceType: 'instance', Key: 'euca:node', Value: host },
    ]);
    const [otherValue, byKey, emptyOnly, everything, left] = await boto3(env, EUCALYPTUS, [
      call('delete_tags', { Resources: [a], Tags: [{ Key: 'Owner', Value: OWNER }] }),
      call('delete_tags', { Resources: [a], Tags: [{ Key: 'Role' }] }),
      call('delete_tags', { Resources: [a], Tags: [{ Key: 'Flag', Value: '' }, { Key: 'Project', Value: '' }] }),
      resourceTags(a),
      call('describe_instances', { InstanceIds: [b] }),
    ]);
    for (const r of [otherValue, byKey, emptyOnly]) expect(r?.error, JSON.stringify(r?.error)).toBeUndefined();
    expect(everything?.response.Tags.map((t: any) => `${t.Key}=${t.Value}`)).toEqual(['Owner=bob', 'Project=ferry', `euca:node=${host}`]);
    expect(userTags(instancesOf(left?.response)[0]?.Tags)).toEqual({ Owner: OWNER, Project: 'ferry', Role: 'web' });
    const [all, none] = await boto3(env, EUCALYPTUS, [call('delete_tags', { Resources: [a] }), resourceTags(a)]);
    expect(all?.error, JSON.stringify(all?.error)).toBeUndefined();
    expect(none?.response.Tags).toEqual([{ ResourceId: a, ResourceType: 'instance', Key: 'euca:node', Value: host }]);
    await ok(call('create_tags', { Resources: [a], Tags: [{ Key: 'Owner', Value: OWNER }] }));
  }, 120_000);

  it('the describe_tags paginator (PageSize 5) and the CLI walk user and system tags, each exactly once', async () => {
    const [pages, all] = await boto3(env, EUCALYPTUS, [{ paginate: 'describe_tags', config: { PageSize: 5 } }, call('describe_tags')]);
    const key = (t: any): string => `${t.ResourceId} ${t.Key}=${t.Value}`;
    const every = (all?.response.Tags ?? []).map(key);
    expect(every.filter((k: string) => !k.includes(' euca:')).length).toBeGreaterThanOrEqual(5);
    expect(every.filter((k: string) => k.includes(' euca:node=')).length).toBeGreaterThan(5);
    expect(pages?.pages?.length).toBeGreaterThan(2);
    const walked = (pages?.pages ?? []).flatMap((p: any) => p.Tags.map(key));
    expect(walked).toEqual(every);
    const viaCli = await cli('describe-tags', '--page-size', '5');
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(viaCli.json.Tags.map(key)).toEqual(every);
  });

  it('aws ec2 create-tags, describe-instances --filters Name=tag:..., delete-tags, and run-instances --tag-specifications', async () => {
    const [a, b] = tagged as [string, string];
    const env_ = `env-${process.pid}`;
    const created = await cli('create-tags', '--resources', a, b, '--tags', `Key=Env,Value=${env_}`, 'Key=Empty');
    expect(created.code, created.stderr).toBe(0);
    const found = await cli('describe-instances', '--filters', `Name=tag:Env,Values=${env_}`);
    expect(found.code, found.stderr).toBe(0);
    expect(sorted(idsOf(found.json))).toEqual([a, b]);
    for (const i of instancesOf(found.json)) expect(userTags(i.Tags)).toMatchObject({ Env: env_, Empty: '' });
    const deleted = await cli('delete-tags', '--resources', a, '--tags', 'Key=Env', 'Key=Empty');
    expect(deleted.code, deleted.stderr).toBe(0);
    const after = await cli('describe-instances', '--filters', `Name=tag-value,Values=${env_}`);
    expect(idsOf(after.json)).toEqual([b]);
    const launched = await cli('run-instances', '--image-id', EMI, '--count', '1', '--tag-specifications', `ResourceType=instance,Tags=[{Key=Owner,Value=${OWNER}-cli}]`);
    expect(launched.code, launched.stderr).toBe(0);
    expect(userTags(launched.json.Instances[0].Tags)).toEqual({ Owner: `${OWNER}-cli` });
    const byTag = await cli('describe-tags', '--filters', 'Name=key,Values=Owner', `Name=value,Values=${OWNER}-cli`);
    expect(byTag.json.Tags.map((t: any) => t.ResourceId)).toEqual([launched.json.Instances[0].InstanceId]);
  }, 120_000);

  it('a repeated ClientToken binds the tags: the same tags repeat the reservation, other tags are IdempotentParameterMismatch', async () => {
    const token = `ferry-tags-${process.pid}`;
    const spec = (value: string) => [{ ResourceType: 'instance', Tags: [{ Key: 'Owner', Value: value }] }];
    const first = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token, TagSpecifications: spec(OWNER) }));
    const again = await ok(call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token, TagSpecifications: spec(OWNER) }));
    expect(again.ReservationId).toBe(first.ReservationId);
    await refusedChangingNothing(async () => {
      const [other, none] = await boto3(env, EUCALYPTUS, [
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token, TagSpecifications: spec('mallory') }),
        call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, ClientToken: token }),
      ]);
      expectCoded(other, 'IdempotentParameterMismatch', 400);
      expectCoded(none, 'IdempotentParameterMismatch', 400);
    });
  });

  it.each([
    ['an unknown volume beside a known instance', () => call('create_tags', { Resources: [tagged[0], 'vol-0a1b2c3d'], Tags: [{ Key: 'a', Value: 'b' }] }), 'InvalidVolume.NotFound'],
    ['a snapshot id (Ferry tags instances and volumes only)', () => call('create_tags', { Resources: ['snap-0a1b2c3d'], Tags: [{ Key: 'a', Value: 'b' }] }), 'InvalidID'],
    ['an id that is no EC2 id', () => call('create_tags', { Resources: ['web01'], Tags: [{ Key: 'a', Value: 'b' }] }), 'InvalidID'],
    ['a malformed instance id', () => call('create_tags', { Resources: ['i-xyz'], Tags: [{ Key: 'a', Value: 'b' }] }), 'InvalidInstanceID.Malformed'],
    ['an unknown instance beside a known one', () => call('create_tags', { Resources: [tagged[0], 'i-00000000'], Tags: [{ Key: 'a', Value: 'b' }] }), 'InvalidInstanceID.NotFound'],
    ['no tags (Tags=[] sends none)', () => call('create_tags', { Resources: [tagged[0]], Tags: [] }), 'InvalidParameterValue'],
    ['an aws: key', () => call('create_tags', { Resources: [tagged[0]], Tags: [{ Key: 'aws:cloudformation:stack-name', Value: 's' }] }), 'InvalidParameterValue'],
    ['a euca: key', () => call('create_tags', { Resources: [tagged[0]], Tags: [{ Key: 'euca:node', Value: '127.0.43.99' }] }), 'InvalidParameterValue'],
    ['deleting euca:node', () => call('delete_tags', { Resources: [tagged[0]], Tags: [{ Key: 'euca:node' }] }), 'InvalidParameterValue'],
    ['a 129-character key', () => call('create_tags', { Resources: [tagged[0]], Tags: [{ Key: 'k'.repeat(129), Value: 'v' }] }), 'InvalidParameterValue'],
    ['a 257-character value', () => call('create_tags', { Resources: [tagged[0]], Tags: [{ Key: 'k', Value: 'v'.repeat(257) }] }), 'InvalidParameterValue'],
    ['51 tags', () => call('create_tags', { Resources: [tagged[0]], Tags: Array.from({ length: 51 }, (_, k) => ({ Key: `k${k}`, Value: '' })) }), 'TagLimitExceeded'],
    ['a TagSpecification of a volume', () => call('run_instances', { ImageId: EMI, MinCount: 1, MaxCount: 1, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'a', Value: 'b' }] }] }), 'InvalidParameterValue'],
    ['DryRun', () => call('create_tags', { Resources: [tagged[0]], Tags: [{ Key: 'a', Value: 'b' }], DryRun: true }), 'DryRunOperation'],
  ])('%s is a coded error and changes nothing', async (_name, step, code) => {
    await refusedChangingNothing(async () => expectCoded(await one(step()), code, code === 'DryRunOperation' ? 412 : 400));
  });

  it('the CLI prints the coded error and changes nothing', async () => {
    await refusedChangingNothing(async () => {
      const r = await cli('create-tags', '--resources', tagged[0] as string, '--tags', 'Key=aws:x,Value=y');
      expect(r.code).toBe(254);
      expect(r.stderr).toContain('InvalidParameterValue');
      expect(r.stderr).toContain("Tag keys starting with 'aws:' are reserved");
    });
  });
});
