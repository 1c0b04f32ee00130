/** The volume and attachment machines (tables), and the CLC's attach/detach refusals, table-driven. */
import { describe, expect, it } from 'vitest';
import { isFerryError } from '../../shared/errors/registry.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import {
  ATTACHMENT_TRANSITIONS, stepAttachment, stepVolume, VOLUME_STATES, VOLUME_TRANSITIONS, type AttachmentEvent, type VolumeEvent, type VolumeState,
} from '../../clc/core/volumeMachine.js';
import type { VolumeRecord } from '../../clc/core/volumeRecords.js';
import { attachRefusal, detachRefusal } from '../../clc/core/volumeRules.js';
import type { AttachmentStatus } from '../../shared/protocol/volumes.js';

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return isFerryError(e) ? e.code : `not coded: ${String(e)}`;
  }
}

describe('the volume machine', () => {
  it.each<[VolumeState, VolumeEvent, VolumeState | 'IncorrectState']>([
    ['creating', 'created', 'available'],
    ['creating', 'createFailed', 'error'],
    ['creating', 'attach', 'IncorrectState'],
    ['creating', 'delete', 'IncorrectState'],
    ['available', 'attach', 'in-use'],
    ['available', 'delete', 'deleting'],
    ['available', 'released', 'IncorrectState'],
    ['in-use', 'attach', 'IncorrectState'],
    ['in-use', 'delete', 'IncorrectState'],
    ['in-use', 'released', 'available'],
    ['deleting', 'deleted', 'deleted'],
    ['deleting', 'deleteFailed', 'error'],
    ['deleting', 'delete', 'deleting'],
    ['deleting', 'attach', 'IncorrectState'],
    ['error', 'delete', 'deleting'],
    ['error', 'attach', 'IncorrectState'],
    ['deleted', 'delete', 'IncorrectState'],
  ])('%s --%s--> %s', (from, event, to) => {
    if (to === 'IncorrectState') expect(codeOf(() => stepVolume('vol-00000001', from, event))).toBe('IncorrectState');
    else expect(stepVolume('vol-00000001', from, event)).toBe(to);
  });

  it('every row starts and ends in a state, no state/event pair twice, and deleted is final', () => {
    const pairs = VOLUME_TRANSITIONS.map((r) => `${r.from}/${r.event}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    for (const r of VOLUME_TRANSITIONS) expect(VOLUME_STATES).toContain(r.to);
    expect(VOLUME_TRANSITIONS.filter((r) => r.from === 'deleted')).toEqual([]);
  });
});

describe('the attachment machine', () => {
  it.each<[AttachmentStatus, AttachmentEvent, AttachmentStatus | 'IncorrectState']>([
    ['attaching', 'attachConfirmed', 'attached'],
    ['attaching', 'attachRefused', 'detached'],
    ['attaching', 'detach', 'IncorrectState'],
    ['attaching', 'forceDetach', 'detaching'],
    ['attached', 'detach', 'detaching'],
    ['attached', 'forceDetach', 'detaching'],
    ['attached', 'attachConfirmed', 'IncorrectState'],
    ['detaching', 'detachConfirmed', 'detached'],
    ['detaching', 'detachRefused', 'attached'],
    ['detaching', 'detach', 'detaching'],
    ['detaching', 'attachConfirmed', 'IncorrectState'],
    ['detached', 'detach', 'IncorrectState'],
  ])('%s --%s--> %s', (from, event, to) => {
    if (to === 'IncorrectState') expect(codeOf(() => stepAttachment('vol-00000001', from, event))).toBe('IncorrectState');
    else expect(stepAttachment('vol-00000001', from, event)).toBe(to);
  });

  it('detached is final and no pair is listed twice', () => {
    const pairs = ATTACHMENT_TRANSITIONS.map((r) => `${r.from}/${r.event}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(ATTACHMENT_TRANSITIONS.filter((r) => r.from === 'detached')).toEqual([]);
  });
});

const vol = (over: Partial<VolumeRecord> = {}): VolumeRecord => ({
  volumeId: 'vol-00000001', ownerId: 'admin', size: 1, partition: 'cluster01', volumeType: 'standard', createTime: 1, state: 'available', path: '/s/volumes/vol-00000001.img', ...over,
});
const inst = (over: Partial<InstanceView> = {}): InstanceView => ({
  instanceId: 'i-00000001', reservationId: 'r-00000001', ownerId: 'admin', imageId: 'emi-00000001', instanceType: 'm1.small', state: 'running',
  partition: 'cluster01', host: '127.0.72.1', launchTime: 1, launchIndex: 0, migration: { state: 'none' }, reported: true, ...over,
});
const attached = (instanceId: string, device: string, status: AttachmentStatus = 'attached') => ({ instanceId, device, status, attachTime: 2, deleteOnTermination: false });
const ask = { volumeId: 'vol-00000001', instanceId: 'i-00000001', device: '/dev/vdb' };

describe('which AttachVolume the CLC refuses', () => {
  const other = vol({ volumeId: 'vol-00000002', state: 'in-use', attachment: attached('i-00000001', '/dev/vdb') });
  it.each<[string, VolumeRecord, InstanceView, Record<string, VolumeRecord>, Partial<typeof ask>, ReadonlySet<string>, string | undefined]>([
    ['a good one', vol(), inst(), {}, {}, new Set(), undefined],
    ['another zone', vol(), inst({ partition: 'cluster02' }), {}, {}, new Set(), 'InvalidVolume.ZoneMismatch'],
    ['a volume in use', vol({ state: 'in-use', attachment: attached('i-00000002', '/dev/vdc') }), inst(), {}, {}, new Set(), 'VolumeInUse'],
    ['a volume being created', vol({ state: 'creating' }), inst(), {}, {}, new Set(), 'IncorrectState'],
    ['a volume in error', vol({ state: 'error' }), inst(), {}, {}, new Set(), 'IncorrectState'],
    ['a stopped instance', vol(), inst({ state: 'stopped' }), {}, {}, new Set(), 'IncorrectInstanceState'],
    ['a shutting-down instance', vol(), inst({ state: 'shutting-down' }), {}, {}, new Set(), 'IncorrectInstanceState'],
    ['a migrating instance', vol(), inst({ migration: { state: 'migrating', source: '127.0.72.1', destination: '127.0.72.2' } }), {}, {}, new Set(), 'OperationNotPermitted'],
    ['an instance queued in a plan', vol(), inst({ migration: { state: 'none', destination: '127.0.72.2' } }), {}, {}, new Set(), 'OperationNotPermitted'],
    ['an instance on a fenced host', vol(), inst(), {}, {}, new Set(['127.0.72.1']), 'IncorrectInstanceState'],
    ['a device another volume holds', vol(), inst(), { [other.volumeId]: other }, {}, new Set(), 'InvalidParameterValue'],
    ['the root device', vol(), inst(), {}, { device: '/dev/vda' }, new Set(), 'InvalidParameterValue'],
    ['a free device next to a taken one', vol(), inst(), { [other.volumeId]: other }, { device: '/dev/vdc' }, new Set(), undefined],
  ])('%s', (_name, volume, instance, volumes, over, fenced, code) => {
    expect(attachRefusal(volume, instance, volumes, { ...ask, ...over }, fenced)?.code).toBe(code);
  });
});

describe('which DetachVolume the CLC refuses', () => {
  it.each<[string, VolumeRecord, { instanceId?: string; device?: string; force?: boolean }, string | undefined]>([
    ['attached', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb') }), {}, undefined],
    ['not attached', vol(), {}, 'IncorrectState'],
    ['another instance named', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb') }), { instanceId: 'i-00000002' }, 'InvalidAttachment.NotFound'],
    ['another device named', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb') }), { device: '/dev/vdc' }, 'InvalidAttachment.NotFound'],
    ['an attach that never answered', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb', 'attaching') }), {}, 'IncorrectState'],
    ['the same with Force', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb', 'attaching') }), { force: true }, undefined],
    ['a detach that never answered, again', vol({ state: 'in-use', attachment: attached('i-00000001', '/dev/vdb', 'detaching') }), {}, undefined],
  ])('%s', (_name, volume, a, code) => {
    expect(detachRefusal(volume, { volumeId: volume.volumeId, force: a.force ?? false, instanceId: a.instanceId, device: a.device })?.code).toBe(code);
  });
});
