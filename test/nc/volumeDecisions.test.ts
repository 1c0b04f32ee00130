/** The NC's volume decisions and the settling of half-done attachments after a restart, table-driven. */
import { describe, expect, it } from 'vitest';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import type { InstanceRecord } from '../../nc/ncStore.js';
import { decideAttach, decideDetach, settleAttachments } from '../../nc/volumeDecisions.js';
import type { NcVolumeAttachment } from '../../shared/protocol/volumes.js';

const HOST = '127.0.72.1';
const rec = (over: Partial<InstanceRecord> = {}): InstanceRecord => ({
  instanceId: 'i-00000001', reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: 'admin', launchTime: 1,
  vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, phase: 'running', since: 1, migrationState: 'none', ...over,
});
const att = (volumeId: string, device: string, status: NcVolumeAttachment['status'] = 'attached'): NcVolumeAttachment => ({ volumeId, device, path: `/s/volumes/${volumeId}.img`, status });
const req = { instanceId: 'i-00000001', volumeId: 'vol-00000001', device: '/dev/vdb', path: '/s/volumes/vol-00000001.img' };

describe('decideAttach', () => {
  it.each<[string, InstanceRecord | undefined, InstanceRecord[], string, string]>([
    ['a running instance', rec(), [], 'running', 'attach'],
    ['no such instance', undefined, [], 'missing', 'InstanceNotFound'],
    ['a tombstone', rec({ phase: 'terminated' }), [], 'missing', 'InstanceNotFound'],
    ['a migrating instance', rec({ migrationState: 'migrating' }), [], 'running', 'InstanceMigrating'],
    ['a pending instance', rec({ phase: 'pending' }), [], 'running', 'VolumeConflict'],
    ['a shut-off domain', rec(), [], 'shutoff', 'VolumeConflict'],
    ['already attached the same way', rec({ volumes: [att('vol-00000001', '/dev/vdb')] }), [], 'running', 'existing'],
    ['an attach that never answered, again', rec({ volumes: [att('vol-00000001', '/dev/vdb', 'attaching')] }), [], 'running', 'attach'],
    ['attached as another device', rec({ volumes: [att('vol-00000001', '/dev/vdc')] }), [], 'running', 'VolumeConflict'],
    ['being detached', rec({ volumes: [att('vol-00000001', '/dev/vdb', 'detaching')] }), [], 'running', 'VolumeConflict'],
    ['the device holds another volume', rec({ volumes: [att('vol-00000002', '/dev/vdb')] }), [], 'running', 'VolumeConflict'],
    ['another instance here holds it', rec(), [rec({ instanceId: 'i-00000002', volumes: [att('vol-00000001', '/dev/vdb')] })], 'running', 'VolumeConflict'],
    ['a tombstone held it', rec(), [rec({ instanceId: 'i-00000002', phase: 'terminated', volumes: [att('vol-00000001', '/dev/vdb')] })], 'running', 'attach'],
  ])('%s → %s', (_name, r, others, observed, want) => {
    const d = decideAttach(HOST, r, others, req, observed as never);
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(want);
  });
});

describe('decideDetach', () => {
  it.each<[string, InstanceRecord | undefined, boolean, string, string]>([
    ['attached, running', rec({ volumes: [att('vol-00000001', '/dev/vdb')] }), false, 'running', 'detach'],
    ['not attached', rec(), false, 'running', 'VolumeNotAttached'],
    ['no such instance', undefined, false, 'missing', 'InstanceNotFound'],
    ['a stopped instance', rec({ volumes: [att('vol-00000001', '/dev/vdb')] }), false, 'shutoff', 'VolumeConflict'],
    ['a stopped instance, forced', rec({ volumes: [att('vol-00000001', '/dev/vdb')] }), true, 'shutoff', 'detach'],
    ['a migrating instance, forced', rec({ migrationState: 'migrating', volumes: [att('vol-00000001', '/dev/vdb')] }), true, 'running', 'InstanceMigrating'],
    ['still attaching', rec({ volumes: [att('vol-00000001', '/dev/vdb', 'attaching')] }), false, 'running', 'VolumeConflict'],
    ['still attaching, forced', rec({ volumes: [att('vol-00000001', '/dev/vdb', 'attaching')] }), true, 'running', 'detach'],
  ])('%s → %s', (_name, r, force, observed, want) => {
    const d = decideDetach(HOST, r, { instanceId: 'i-00000001', volumeId: 'vol-00000001', force }, observed as never);
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(want);
  });
});

describe('settleAttachments (start and reconnect)', () => {
  const domain = (volumes: string[]): DomainInfo => ({
    id: 'i-00000001', state: 'running', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-00000001', diskPath: '/d', startedAt: 1,
    volumes: volumes.map((v) => ({ volumeId: v, device: '/dev/vdb', path: `/s/volumes/${v}.img` })),
  });
  it.each<[string, NcVolumeAttachment, string[], NcVolumeAttachment[] | 'unchanged', number]>([
    ['attaching, the domain holds it: attached', att('vol-00000001', '/dev/vdb', 'attaching'), ['vol-00000001'], [att('vol-00000001', '/dev/vdb')], 0],
    ['attaching, the domain lacks it: gone', att('vol-00000001', '/dev/vdb', 'attaching'), [], [], 0],
    ['detaching, the domain holds it: attached', att('vol-00000001', '/dev/vdb', 'detaching'), ['vol-00000001'], [att('vol-00000001', '/dev/vdb')], 0],
    ['detaching, the domain lacks it: gone', att('vol-00000001', '/dev/vdb', 'detaching'), [], [], 0],
    ['attached and held: nothing to do', att('vol-00000001', '/dev/vdb'), ['vol-00000001'], 'unchanged', 0],
    ['attached, the domain lost it: attached again', att('vol-00000001', '/dev/vdb'), [], 'unchanged', 1],
  ])('%s', (_name, a, held, want, reattach) => {
    const r = settleAttachments({ 'i-00000001': rec({ volumes: [a] }) }, [domain(held)]);
    if (want === 'unchanged') expect(r.volumes.has('i-00000001')).toBe(false);
    else expect(r.volumes.get('i-00000001')).toEqual(want);
    expect(r.reattach).toHaveLength(reattach);
  });
});
