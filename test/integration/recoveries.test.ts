/**
 * Two recoveries of issue 18 through one cloud of real processes on 127.0.84.0/24 (its simulated
 * guests ignore ACPI reboot requests, its NCs reset them after 2 s).
 *
 * Volumes a killed CLC left in flight: the CLC is killed (-9), its clc.json is written as a crash at each step leaves it
 * (a volume recorded `creating` whose file was never made, one `deleting` whose file is still there,
 * attachments `attaching` / `detaching` that the NC did or did not carry out), and the restarted CLC
 * resolves every one from what the storage and the NC show: each seen by its own witness
 * (DescribeVolumes, the file on the shared storage, the simulated hypervisor's domain).
 *
 * RebootInstances of a guest that ignores the request: the NC resets it once its bound has passed,
 * says so in its log and on the instance (lastReboot), and the guest's disk shows the reboot.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import { storageDirOf } from '../../scripts/cloudLayout.js';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, until } from '../helpers/cloudApi.js';

// A short CC timeout: the restarted CLC looks at the attachments two of them after it starts.
const cloud = new TestCloud(84, 1, {
  clcArgs: ['--cc-timeout-ms', '4000'], simArgs: ['--guest-ignores-acpi'], ncArgs: ['--reboot-timeout-ms', '2000'],
});
const ZONE = 'cluster01';
const [host] = cloud.nodeHosts as [string];
const storage = storageDirOf({ baseDir: cloud.baseDir });
const fileOf = (volumeId: string) => join(storage, 'volumes', `${volumeId}.img`);
const clcJson = join(cloud.baseDir, 'clc', 'clc.json');

async function createVolume(): Promise<string> {
  return (await adminCall(cloud, { Action: 'CreateVolume', Size: '1', AvailabilityZone: ZONE })).volumeId as string;
}

async function volumes(): Promise<Map<string, any>> {
  return new Map(arr<any>((await adminCall(cloud, { Action: 'DescribeVolumes' })).volumeSet?.item).map((v) => [v.volumeId as string, v]));
}

const summary = (v: any): string => (v === undefined ? 'gone' : `${v.status}${v.attachmentSet?.item ? ` ${v.attachmentSet.item.status}` : ''}`);

async function domainVolumes(instanceId: string): Promise<string[]> {
  const driver = new SimDriver({ socketPath: cloud.simSocket(host) });
  try {
    return ((await driver.info(instanceId))?.volumes ?? []).map((v) => v.volumeId).sort();
  } finally {
    await driver.close();
  }
}

beforeAll(async () => { await cloud.start(); }, 120_000);
afterAll(async () => { await cloud.destroy(); });

describe('a CLC killed with volumes in flight', () => {
  it('the restarted CLC finishes or fails each from the storage and the NC: creating, deleting, attaching, detaching', async () => {
    const run = await adminCall(cloud, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', MinCount: '1', MaxCount: '1' });
    const instanceId = arr<any>(run.instancesSet.item)[0].instanceId as string;
    await until('it to run', async () => arr<any>(arr<any>((await adminCall(cloud, { Action: 'DescribeInstances', 'InstanceId.1': instanceId })).reservationSet?.item)[0]?.instancesSet?.item)[0]?.instanceState?.name, (s) => s === 'running');
    const [deleting, attachingDone, detachingNotDone, attachingNotDone, detachingDone] = [
      await createVolume(), await createVolume(), await createVolume(), await createVolume(), await createVolume(),
    ] as [string, string, string, string, string];
    await adminCall(cloud, { Action: 'AttachVolume', VolumeId: attachingDone, InstanceId: instanceId, Device: '/dev/sdf' });
    await adminCall(cloud, { Action: 'AttachVolume', VolumeId: detachingNotDone, InstanceId: instanceId, Device: '/dev/sdg' });
    expect(await domainVolumes(instanceId)).toEqual([attachingDone, detachingNotDone].sort());

    await cloud.crash('clc');
    // clc.json as a CLC killed at each step leaves it.
    const doc = JSON.parse(readFileSync(clcJson, 'utf8'));
    const vols = doc.data.volumes;
    const creating = 'vol-0000c0de';
    expect(existsSync(fileOf(creating))).toBe(false);
    vols[creating] = { ...vols[deleting], volumeId: creating, state: 'creating', createTime: vols[deleting].createTime + 1 };
    delete vols[creating].path;
    vols[deleting].state = 'deleting';
    vols[attachingDone].attachment.status = 'attaching';
    vols[detachingNotDone].attachment.status = 'detaching';
    const attachment = (device: string, status: string) => ({ instanceId, device, status, attachTime: vols[deleting].createTime, deleteOnTermination: false });
    vols[attachingNotDone] = { ...vols[attachingNotDone], state: 'in-use', attachment: attachment('/dev/sdh', 'attaching') };
    vols[detachingDone] = { ...vols[detachingDone], state: 'in-use', attachment: attachment('/dev/sdi', 'detaching') };
    writeFileSync(clcJson, JSON.stringify(doc, null, 1));

    await cloud.start(['clc']);
    // Storage steps are finished before the CLC serves: the file made, the other removed.
    const first = await volumes();
    expect(summary(first.get(creating))).toBe('available');
    expect(existsSync(fileOf(creating))).toBe(true);
    expect(first.has(deleting)).toBe(false);
    expect(existsSync(fileOf(deleting))).toBe(false);
    // Attachments once the dead CLC's calls can have ended: as the NC holds them.
    const settled = await until('the attachments to settle', volumes, (m) => [attachingDone, detachingNotDone, attachingNotDone, detachingDone]
      .every((id) => !['attaching', 'detaching'].includes(m.get(id)?.attachmentSet?.item?.status)), 60_000);
    expect([attachingDone, detachingNotDone, attachingNotDone, detachingDone].map((id) => summary(settled.get(id))))
      .toEqual(['in-use attached', 'in-use attached', 'available', 'available']);
    expect(await domainVolumes(instanceId)).toEqual([attachingDone, detachingNotDone].sort());
    expect(cloud.log('clc')).toContain('volume attachment left in flight resolved');
    // And they work on: the one whose detach never happened detaches now.
    await adminCall(cloud, { Action: 'DetachVolume', VolumeId: detachingNotDone });
    expect(await domainVolumes(instanceId)).toEqual([attachingDone]);
  }, 240_000);
});

describe('a guest that ignores a reboot request', () => {
  it('RebootInstances answers at once; 2 s later its NC resets the guest, logs it and records it on the instance', async () => {
    const run = await adminCall(cloud, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', MinCount: '1', MaxCount: '1' });
    const instanceId = arr<any>(run.instancesSet.item)[0].instanceId as string;
    await until('it to run', async () => arr<any>(arr<any>((await adminCall(cloud, { Action: 'DescribeInstances', 'InstanceId.1': instanceId })).reservationSet?.item)[0]?.instancesSet?.item)[0]?.instanceState?.name, (s) => s === 'running');
    const simLog = () => cloud.log(`simhv-${host}`).split('\n').filter((l) => l.includes(instanceId));
    expect((await adminCall(cloud, { Action: 'RebootInstances', 'InstanceId.1': instanceId })).return).toBe('true');
    await until('the guest to ignore the request', async () => simLog().some((l) => l.includes('ACPI reboot request ignored by the guest')), (ignored) => ignored, 30_000);
    await until('the NC to reset it', async () => simLog().some((l) => l.includes('domain reset (hard reboot)')), (done) => done, 60_000);
    await until('the NC log to say so', async () => cloud.log(`nc-${host}`), (log) => /the guest ignored the ACPI reboot request: reset/.test(log), 30_000);
    const nc = JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', host, 'nc', 'nc.json'), 'utf8'));
    expect(nc.data.instances[instanceId].lastReboot).toMatchObject({ how: 'reset' });
    const described = await adminCall(cloud, { Action: 'DescribeInstances', 'InstanceId.1': instanceId });
    expect(arr<any>(arr<any>(described.reservationSet?.item)[0]?.instancesSet?.item)[0]?.instanceState?.name).toBe('running');
  }, 120_000);
});
