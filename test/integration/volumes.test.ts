/**
 * Volumes (issue 18 parts 1-2) through a cloud of real processes on 127.0.72.0/24: create → attach →
 * the simulated hypervisor's domain holds the volume file → detach → delete, each step seen by its
 * own witness (DescribeVolumes, the simhv daemon, the file on the shared storage); an attach queued
 * in the change gate behind a pending DisableService and released after it; bad requests answered
 * with their codes and changing nothing; and the real clients (Debian's boto3 and aws CLI with
 * default settings, the aws CLI's `wait volume-available` and boto3's waiters) over the same calls.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsCli, awsToolEnv, boto3, sourceCredentials, type Boto3Result, type Boto3Step } from '../clients/awsTools.js';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, hypervisorDomains, setNodeState, until } from '../helpers/cloudApi.js';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';

const cloud = new TestCloud(72, 2);
const ZONE = 'cluster01';
const EMI = 'emi-0a1b2c3d';
const WAIT_FAST = { Delay: 1, MaxAttempts: 60 };
const GiB = 1024 ** 3;

let env: NodeJS.ProcessEnv;
const call = (op: string, args: Record<string, unknown> = {}): Boto3Step => ({ call: op, args });
const cli = (...args: string[]) => awsCli(env, cloud.url, args);

/** The host whose simhv runs `instanceId`. */
async function hostOf(instanceId: string): Promise<string> {
  for (const h of cloud.nodeHosts) if ((await hypervisorDomains(cloud, h)).some((d) => d.id === instanceId)) return h;
  throw new Error(`${instanceId} runs nowhere`);
}

/** The volumes the simhv domain of `instanceId` holds, as its daemon says. */
async function domainVolumes(instanceId: string): Promise<{ volumeId: string; device: string; path: string }[]> {
  const driver = new SimDriver({ socketPath: cloud.simSocket(await hostOf(instanceId)) });
  try {
    return [...((await driver.info(instanceId))?.volumes ?? [])];
  } finally {
    await driver.close();
  }
}

/** The first line of a daemon's log that holds every one of `parts`. */
function logLine(name: string, ...parts: string[]): string | undefined {
  return cloud.log(name).split('\n').find((l) => parts.every((p) => l.includes(p)));
}

async function volume(volumeId: string): Promise<any> {
  return arr<any>((await adminCall(cloud, { Action: 'DescribeVolumes', 'VolumeId.1': volumeId })).volumeSet?.item)[0];
}

/** Everything a refused volume request must leave as it was: the CLC's volumes and every domain's volumes. */
async function holdings(): Promise<string> {
  const vols = arr<any>((await adminCall(cloud, { Action: 'DescribeVolumes' })).volumeSet?.item)
    .map((v) => `${v.volumeId} ${v.status} ${JSON.stringify(v.attachmentSet ?? '')}`);
  const domains = (await Promise.all(cloud.nodeHosts.map(async (h) => {
    const driver = new SimDriver({ socketPath: cloud.simSocket(h) });
    try {
      return (await driver.list()).map((d) => `${d.id} ${JSON.stringify(d.volumes ?? [])}`);
    } finally {
      await driver.close();
    }
  }))).flat();
  return JSON.stringify([vols.sort(), domains.sort()]);
}

async function launch(): Promise<string> {
  const r = await adminCall(cloud, { Action: 'RunInstances', ImageId: EMI, MinCount: '1', MaxCount: '1' });
  return arr<any>(r.instancesSet.item)[0].instanceId as string;
}

async function createVolume(size = 1): Promise<string> {
  return (await adminCall(cloud, { Action: 'CreateVolume', Size: String(size), AvailabilityZone: ZONE })).volumeId as string;
}

beforeAll(async () => {
  await cloud.start();
  env = awsToolEnv(await sourceCredentials(cloud.credentialsFile()), join(cloud.baseDir, 'home'));
});
afterAll(async () => { await cloud.destroy(); });

describe('a volume through its life, with the admin API', () => {
  it('create → attach (the domain holds the file) → detach → delete', async () => {
    const instanceId = await launch();
    const created = await adminCall(cloud, { Action: 'CreateVolume', Size: '2', AvailabilityZone: ZONE });
    const volumeId = created.volumeId as string;
    expect(volumeId).toMatch(/^vol-[0-9a-f]{8}$/);
    expect(created.status).toBe('available');
    expect(created.availabilityZone).toBe(ZONE);
    const file = join(cloud.baseDir, 'storage', 'volumes', `${volumeId}.img`);
    expect(statSync(file).size).toBe(2 * GiB);

    const attached = await adminCall(cloud, { Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/vdb' });
    expect(attached).toMatchObject({ volumeId, instanceId, device: '/dev/vdb', status: 'attached' });
    expect(await domainVolumes(instanceId)).toEqual([{ volumeId, device: '/dev/vdb', path: file }]);
    const inUse = await volume(volumeId);
    expect(inUse.status).toBe('in-use');
    expect(inUse.attachmentSet.item).toMatchObject({ instanceId, device: '/dev/vdb', status: 'attached' });

    const detached = await adminCall(cloud, { Action: 'DetachVolume', VolumeId: volumeId });
    expect(detached).toMatchObject({ volumeId, instanceId, status: 'detached' });
    expect(await domainVolumes(instanceId)).toEqual([]);
    expect((await volume(volumeId)).status).toBe('available');

    expect((await adminCall(cloud, { Action: 'DeleteVolume', VolumeId: volumeId })).return).toBe('true');
    expect(existsSync(file)).toBe(false);
    const gone = await cloud.query({ Action: 'DescribeVolumes', 'VolumeId.1': volumeId });
    expect(gone.text).toContain('InvalidVolume.NotFound');
  }, 120_000);

  it('a stopped instance with a volume, started while its node is disabled, moves with the volume in its new domain from the start', async () => {
    const instanceId = await launch();
    const volumeId = await createVolume();
    await adminCall(cloud, { Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/vdc' });
    const home = await hostOf(instanceId);
    const other = cloud.nodeHosts.find((h) => h !== home) as string;
    await adminCall(cloud, { Action: 'StopInstances', 'InstanceId.1': instanceId });
    await setNodeState(cloud, home, false);
    try {
      const started = await adminCall(cloud, { Action: 'StartInstances', 'InstanceId.1': instanceId });
      expect(arr<any>(started.instancesSet.item)[0]).toMatchObject({ instanceId, currentState: { name: 'running' }, nodeHost: other });
    } finally {
      await setNodeState(cloud, home, true);
    }
    expect(await hostOf(instanceId)).toBe(other);
    // In the definition it was created with: nobody attached it afterwards (no attach reached the new NC).
    expect(await domainVolumes(instanceId)).toEqual([{ volumeId, device: '/dev/vdc', path: join(cloud.baseDir, 'storage', 'volumes', `${volumeId}.img`) }]);
    expect(cloud.log(`nc-${other}`)).not.toMatch(new RegExp(`volume attached.*${volumeId}|${volumeId}.*volume attached`));
    expect((await volume(volumeId)).attachmentSet.item).toMatchObject({ instanceId, device: '/dev/vdc', status: 'attached' });
    // And it detaches from there as from any node.
    await adminCall(cloud, { Action: 'DetachVolume', VolumeId: volumeId });
    expect(await domainVolumes(instanceId)).toEqual([]);
  }, 120_000);

  it('an NC restart keeps an attachment: the record and the domain still hold it', async () => {
    const instanceId = await launch();
    const volumeId = await createVolume();
    await adminCall(cloud, { Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/vdc' });
    const host = await hostOf(instanceId);
    const ncStore = join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json');
    const recorded = (): unknown => JSON.parse(readFileSync(ncStore, 'utf8')).data.instances[instanceId]?.volumes;
    // Persisted by the NC before it answered, and still there after a SIGKILL and a restart.
    expect(recorded()).toEqual([expect.objectContaining({ volumeId, device: '/dev/vdc', status: 'attached' })]);
    await cloud.crash(`nc-${host}`);
    await cloud.restart(`nc-${host}`);
    expect(recorded()).toEqual([expect.objectContaining({ volumeId, device: '/dev/vdc', status: 'attached' })]);
    expect(await domainVolumes(instanceId)).toEqual([expect.objectContaining({ volumeId, device: '/dev/vdc' })]);
    const detached = await until('DetachVolume after the NC restart', async () => {
      const r = await cloud.query({ Action: 'DetachVolume', VolumeId: volumeId });
      return r.status === 200 ? 'ok' : r.text;
    }, (s) => s === 'ok');
    expect(detached).toBe('ok');
    expect(await domainVolumes(instanceId)).toEqual([]);
    expect(recorded()).toBeUndefined();
  }, 120_000);
});

describe('gating: an attach is a change of the partition', () => {
  it('waits behind a pending DisableService, then runs once it has answered', async () => {
    const instanceId = await launch();
    const volumeId = await createVolume();
    // The node being disabled is the other one: its NC, stopped, keeps the DisableService pending.
    const busy = cloud.nodeHosts.find((h) => h !== undefined) as string;
    const pid = cloud.pid(`nc-${busy}`) as number;
    const order: string[] = [];
    process.kill(pid, 'SIGSTOP');
    let disable: Promise<unknown>;
    let attach: Promise<unknown>;
    try {
      disable = cloud.query({ Action: 'DisableService', Type: 'NODE', Host: busy }).then((r) => { order.push(`disable ${r.status}`); });
      // Once the CLC says the DisableService holds the partition, the attach that follows must wait.
      await until('the DisableService holds the partition', async () => logLine('clc', `DisableService of node ${busy}`, 'an exclusive change holds its partitions'), (l) => l !== undefined);
      attach = cloud.query({ Action: 'AttachVolume', VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/vdd' })
        .then((r) => { order.push(`attach ${r.status}`); return r; });
      await until('the attach waits in the change gate', async () => logLine('clc', `AttachVolume of ${volumeId}`, 'a request waits in the change gate'), (l) => l !== undefined);
      expect(order).toEqual([]);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await Promise.all([disable, attach]);
    expect(order).toEqual(['disable 200', 'attach 200']);
    expect((await volume(volumeId)).status).toBe('in-use');
    await adminCall(cloud, { Action: 'EnableService', Type: 'NODE', Host: busy });
  }, 120_000);
});

describe('bad requests: a coded error, and nothing changed', () => {
  let instanceId: string;
  let used: string;
  let free: string;
  beforeAll(async () => {
    instanceId = await launch();
    used = await createVolume();
    free = await createVolume();
    await adminCall(cloud, { Action: 'AttachVolume', VolumeId: used, InstanceId: instanceId, Device: '/dev/vdb' });
  }, 60_000);

  it.each([
    ['an unknown volume', () => ({ Action: 'AttachVolume', VolumeId: 'vol-0000beef', InstanceId: instanceId, Device: '/dev/vde' }), 'InvalidVolume.NotFound'],
    ['a malformed volume id', () => ({ Action: 'AttachVolume', VolumeId: 'vol-xyz', InstanceId: instanceId, Device: '/dev/vde' }), 'InvalidVolumeID.Malformed'],
    ['an unknown instance', () => ({ Action: 'AttachVolume', VolumeId: free, InstanceId: 'i-0000beef', Device: '/dev/vde' }), 'InvalidInstanceID.NotFound'],
    ['a volume already attached', () => ({ Action: 'AttachVolume', VolumeId: used, InstanceId: instanceId, Device: '/dev/vde' }), 'VolumeInUse'],
    ['a device taken', () => ({ Action: 'AttachVolume', VolumeId: free, InstanceId: instanceId, Device: '/dev/vdb' }), 'InvalidParameterValue'],
    ['the root device', () => ({ Action: 'AttachVolume', VolumeId: free, InstanceId: instanceId, Device: '/dev/vda' }), 'InvalidParameterValue'],
    ['a malformed device', () => ({ Action: 'AttachVolume', VolumeId: free, InstanceId: instanceId, Device: 'vdb' }), 'InvalidParameterValue'],
    ['no device', () => ({ Action: 'AttachVolume', VolumeId: free, InstanceId: instanceId }), 'MissingParameter'],
    ['a detach of an available volume', () => ({ Action: 'DetachVolume', VolumeId: free }), 'IncorrectState'],
    ['a detach naming another instance', () => ({ Action: 'DetachVolume', VolumeId: used, InstanceId: 'i-0000beef' }), 'InvalidAttachment.NotFound'],
    ['a delete of an attached volume', () => ({ Action: 'DeleteVolume', VolumeId: used }), 'VolumeInUse'],
    ['a volume in an unknown zone', () => ({ Action: 'CreateVolume', Size: '1', AvailabilityZone: 'nowhere' }), 'InvalidAvailabilityZone'],
    ['a volume of 0 GiB', () => ({ Action: 'CreateVolume', Size: '0', AvailabilityZone: ZONE }), 'InvalidParameterValue'],
  ])('%s', async (_name, params, code) => {
    const before = await holdings();
    const r = await cloud.query(params() as Record<string, string>);
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.text).toContain(`<Code>${code}</Code>`);
    expect(await holdings()).toBe(before);
  }, 60_000);

  it('an instance that is not running: IncorrectInstanceState', async () => {
    const gone = await launch();
    await adminCall(cloud, { Action: 'TerminateInstances', 'InstanceId.1': gone });
    const before = await holdings();
    const r = await cloud.query({ Action: 'AttachVolume', VolumeId: free, InstanceId: gone, Device: '/dev/vde' });
    expect(r.text).toContain('<Code>IncorrectInstanceState</Code>');
    expect(await holdings()).toBe(before);
  }, 60_000);
});

describe('the real clients, with default settings', () => {
  function expectCoded(r: Boto3Result | undefined, code: string): void {
    expect(r?.error?.code, JSON.stringify(r)).toBe(code);
  }

  it('the aws CLI: create-volume, wait volume-available, describe-volumes, attach-volume, detach-volume, delete-volume', async () => {
    const instanceId = await launch();
    const created = await cli('create-volume', '--size', '1', '--availability-zone', ZONE);
    expect(created.code, created.stderr).toBe(0);
    const volumeId = created.json.VolumeId as string;
    expect(created.json).toMatchObject({ Size: 1, AvailabilityZone: ZONE });
    const waited = await cli('wait', 'volume-available', '--volume-ids', volumeId);
    expect(waited.code, waited.stderr).toBe(0);
    const described = await cli('describe-volumes', '--volume-ids', volumeId);
    expect(described.json.Volumes).toEqual([expect.objectContaining({ VolumeId: volumeId, State: 'available', Size: 1, Attachments: [] })]);
    const attached = await cli('attach-volume', '--volume-id', volumeId, '--instance-id', instanceId, '--device', '/dev/sdf');
    expect(attached.code, attached.stderr).toBe(0);
    expect(attached.json).toMatchObject({ VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/sdf', State: 'attached' });
    const inUse = await cli('wait', 'volume-in-use', '--volume-ids', volumeId);
    expect(inUse.code, inUse.stderr).toBe(0);
    const filtered = await cli('describe-volumes', '--filters', `Name=attachment.instance-id,Values=${instanceId}`);
    expect(filtered.json.Volumes.map((v: any) => v.VolumeId)).toEqual([volumeId]);
    const detached = await cli('detach-volume', '--volume-id', volumeId);
    expect(detached.code, detached.stderr).toBe(0);
    expect((await cli('wait', 'volume-available', '--volume-ids', volumeId)).code).toBe(0);
    const deleted = await cli('delete-volume', '--volume-id', volumeId);
    expect(deleted.code, deleted.stderr).toBe(0);
    const after = await cli('wait', 'volume-deleted', '--volume-ids', volumeId);
    expect(after.code, after.stderr).toBe(0);
    const missing = await cli('describe-volumes', '--volume-ids', volumeId);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('InvalidVolume.NotFound');
  }, 180_000);

  it('tags on volumes: the aws CLI create-tags / describe-tags / delete-tags and boto3 create_tags, DescribeVolumes\' tag filters; an unknown volume changes nothing', async () => {
    const volumeId = await createVolume();
    const tagged = await cli('create-tags', '--resources', volumeId, '--tags', 'Key=app,Value=db', 'Key=tier,Value=gold');
    expect(tagged.code, tagged.stderr).toBe(0);
    const described = await cli('describe-tags', '--filters', `Name=resource-id,Values=${volumeId}`);
    expect(described.json.Tags).toEqual([
      { ResourceId: volumeId, ResourceType: 'volume', Key: 'app', Value: 'db' },
      { ResourceId: volumeId, ResourceType: 'volume', Key: 'tier', Value: 'gold' },
    ]);
    const byTag = await cli('describe-volumes', '--filters', 'Name=tag:tier,Values=gold');
    expect(byTag.json.Volumes.map((v: any) => [v.VolumeId, v.Tags])).toEqual([[volumeId, [{ Key: 'app', Value: 'db' }, { Key: 'tier', Value: 'gold' }]]]);
    const untagged = await cli('delete-tags', '--resources', volumeId, '--tags', 'Key=tier');
    expect(untagged.code, untagged.stderr).toBe(0);
    const before = await holdings();
    const [added, unknown, keyed, listed] = await boto3(env, cloud.url, [
      call('create_tags', { Resources: [volumeId], Tags: [{ Key: 'owner', Value: 'alice' }] }),
      call('create_tags', { Resources: [volumeId, 'vol-0a1b2c3d'], Tags: [{ Key: 'lost', Value: 'x' }] }),
      call('describe_volumes', { Filters: [{ Name: 'tag-key', Values: ['owner'] }] }),
      call('describe_tags', { Filters: [{ Name: 'resource-type', Values: ['volume'] }, { Name: 'resource-id', Values: [volumeId] }] }),
    ]);
    expect(added?.error, JSON.stringify(added)).toBeUndefined();
    expectCoded(unknown, 'InvalidVolume.NotFound');
    expect(keyed?.response.Volumes.map((v: any) => v.VolumeId)).toEqual([volumeId]);
    expect(listed?.response.Tags.map((t: any) => `${t.Key}=${t.Value}`)).toEqual(['app=db', 'owner=alice']);
    expect(await holdings()).toBe(before);
    expect((await cli('delete-volume', '--volume-id', volumeId)).code).toBe(0);
  }, 180_000);

  it('boto3: create_volume, the volume_available / volume_in_use waiters, a paginator, attach, detach, delete; bad input coded', async () => {
    const instanceId = await launch();
    const [created] = await boto3(env, cloud.url, [call('create_volume', { Size: 1, AvailabilityZone: ZONE, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'app', Value: 'db' }] }] })]);
    expect(created?.error, JSON.stringify(created)).toBeUndefined();
    const volumeId = created?.response.VolumeId as string;
    expect(created?.response.Tags).toEqual([{ Key: 'app', Value: 'db' }]);
    const steps = await boto3(env, cloud.url, [
      { wait: 'volume_available', args: { VolumeIds: [volumeId] }, config: WAIT_FAST },
      call('attach_volume', { VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/sdg' }),
      { wait: 'volume_in_use', args: { VolumeIds: [volumeId] }, config: WAIT_FAST },
      { paginate: 'describe_volumes', args: { Filters: [{ Name: 'tag:app', Values: ['db'] }] }, config: { PageSize: 5 } },
      call('attach_volume', { VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/sdh' }),
      call('detach_volume', { VolumeId: volumeId, InstanceId: instanceId }),
      { wait: 'volume_available', args: { VolumeIds: [volumeId] }, config: WAIT_FAST },
      call('delete_volume', { VolumeId: volumeId }),
      call('describe_volumes', { VolumeIds: [volumeId] }),
    ]);
    const [available, attach, inUse, pages, again, detach, availableAgain, del, gone] = steps;
    expect(available?.waited, JSON.stringify(available)).toBe(true);
    expect(attach?.response, JSON.stringify(attach)).toMatchObject({ VolumeId: volumeId, InstanceId: instanceId, Device: '/dev/sdg' });
    expect(inUse?.waited, JSON.stringify(inUse)).toBe(true);
    expect(pages?.pages?.flatMap((p: any) => p.Volumes.map((v: any) => v.VolumeId)), JSON.stringify(pages)).toEqual([volumeId]);
    expectCoded(again, 'VolumeInUse');
    expect(detach?.response, JSON.stringify(detach)).toMatchObject({ VolumeId: volumeId, State: 'detached' });
    expect(availableAgain?.waited).toBe(true);
    expect(del?.error, JSON.stringify(del)).toBeUndefined();
    expectCoded(gone, 'InvalidVolume.NotFound');
  }, 180_000);
});
