/**
 * Fencing and volumes (issue 18 part 4) in the HA runtime over the fake CCs (haWorld.ts): before an
 * instance of a fenced host restarts elsewhere its volumes are fenced from the dead host at the
 * storage level (VolumeBackend.fenceHost), then attached to the new copy through ccAttachVolume; a
 * volume whose detach was under way is released instead; a backend that cannot fence stops the
 * restart; a re-attach that fails is retried; the host that comes back loses its obsolete copy and
 * never gets the volumes back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { VolumeBackend } from '../../../clc/core/volumeBackend.js';
import type { VolumeRecord } from '../../../clc/core/volumeRecords.js';
import { ClcErrors } from '../../../clc/core/errors.js';
import { A, B, C, loseNc, P, stopWorld, world, type World } from './haWorld.js';

afterEach(stopWorld);

const VOL_A = 'vol-0000000a';
const VOL_B = 'vol-0000000b';

/** A backend that logs its fences into the world's log (so their order against the restarts shows). */
class RecordingBackend implements VolumeBackend {
  readonly kind = 'recording';
  failing = false;
  readonly fenced: string[] = [];
  constructor(private readonly log: () => string[]) {}
  create(): Promise<string> { return Promise.resolve('/unused'); }
  remove(): Promise<void> { return Promise.resolve(); }
  fenceHost(volumeId: string, locator: string, host: string): Promise<string> {
    if (this.failing) return Promise.reject(ClcErrors.make('ServiceUnavailable', { delivered: 'no', detail: `storage could not fence ${host} from ${volumeId}` }));
    this.fenced.push(`${volumeId}@${host}`);
    this.log().push(`fence-storage ${volumeId} ${locator}@${host}`);
    return Promise.resolve(`revoked ${host}`);
  }
}

function volume(volumeId: string, instanceId: string, device: string, status: 'attached' | 'detaching'): VolumeRecord {
  return {
    volumeId, ownerId: 'alice', size: 1, partition: P, volumeType: 'standard', createTime: 1, state: 'in-use', path: `/srv/storage/volumes/${volumeId}.img`,
    attachment: { instanceId, device, status, attachTime: 2, deleteOnTermination: false },
  };
}

/** A world whose A runs i-00000001 with VOL_A attached and i-00000002 with VOL_B being detached. */
async function worldWithVolumes(): Promise<{ w: World; backend: RecordingBackend }> {
  let log: string[] = [];
  const backend = new RecordingBackend(() => log);
  const w = await world({ volumes: backend });
  log = w.log;
  await w.store.update((d) => {
    d.volumes[VOL_A] = volume(VOL_A, 'i-00000001', '/dev/vdb', 'attached');
    d.volumes[VOL_B] = volume(VOL_B, 'i-00000002', '/dev/vdc', 'detaching');
  });
  const a = w.fake.node(A);
  const i1 = a?.instances.find((i) => i.instanceId === 'i-00000001');
  if (!i1) throw new Error('no i-00000001 on A');
  i1.volumes = [{ volumeId: VOL_A, device: '/dev/vdb', path: `/srv/storage/volumes/${VOL_A}.img`, status: 'attached' }];
  // Every ccRunInstances is logged in the same log as the fences.
  const orig = w.fake.call.bind(w.fake);
  w.fake.call = (async (p: string, op: never, req: never) => {
    if (op === 'ccRunInstances') w.log.push(`run ${(req as { instanceIds: string[] }).instanceIds.join(',')}`);
    if (op === 'ccAttachVolume') w.log.push(`attach ${(req as { volumeId: string }).volumeId}`);
    return orig(p, op, req);
  }) as typeof w.fake.call;
  return { w, backend };
}

/** Where the live copy of `id` runs now, among the reachable nodes. */
function liveCopy(w: World, id: string) {
  for (const h of [A, B, C]) {
    const n = w.fake.node(h);
    const i = n?.reachable ? n.instances.find((x) => x.instanceId === id && x.state !== 'terminated') : undefined;
    if (i) return { host: h, instance: i };
  }
  return undefined;
}

describe('host HA and volumes', () => {
  it('fences the dead host from the volume, restarts the instance elsewhere, then attaches the volume to the new copy', async () => {
    const { w, backend } = await worldWithVolumes();
    await w.run(100);
    loseNc(w, A, 'inactive');
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');

    // Power fence, then the storage fence of each volume, then the restart, then the re-attach.
    const order = w.log.filter((l) => /^(off@|fence-storage vol-0000000a|run i-00000001|attach)/.test(l));
    expect(order).toEqual([`off@${A}`, `fence-storage ${VOL_A} /srv/storage/volumes/${VOL_A}.img@${A}`, 'run i-00000001', `attach ${VOL_A}`]);
    // The restarted copy is defined with its volume, so its guest sees it at boot; the attach then confirms it.
    expect(w.ops('ccRunInstances').map((c) => (c.req as { volumes?: unknown }).volumes).filter((v) => v !== undefined))
      .toEqual([{ 'i-00000001': [{ volumeId: VOL_A, device: '/dev/vdb', path: `/srv/storage/volumes/${VOL_A}.img` }] }]);
    expect(backend.fenced).toContain(`${VOL_B}@${A}`);

    const copy = liveCopy(w, 'i-00000001');
    expect(copy?.host).not.toBe(A);
    expect(copy?.instance.volumes).toEqual([{ volumeId: VOL_A, device: '/dev/vdb', path: `/srv/storage/volumes/${VOL_A}.img`, status: 'attached' }]);
    const a = w.store.read().volumes[VOL_A];
    expect(a?.state).toBe('in-use');
    expect(a?.attachment).toMatchObject({ instanceId: 'i-00000001', device: '/dev/vdb', status: 'attached', fencedFrom: { host: A, detail: `revoked ${A}` } });

    // The detach its owner asked for before the crash is finished by the fence: nobody gets VOL_B.
    const b = w.store.read().volumes[VOL_B];
    expect(b?.state).toBe('available');
    expect(b?.attachment).toBeUndefined();
    expect(w.log).not.toContain(`attach ${VOL_B}`);
    expect(liveCopy(w, 'i-00000002')?.instance.volumes).toBeUndefined();
  });

  it('a host that comes back loses its obsolete copy and never gets the volume back', async () => {
    const { w } = await worldWithVolumes();
    await w.run(100);
    const node = loseNc(w, A, 'inactive');
    await w.run(800);
    const copy = liveCopy(w, 'i-00000001');
    const attachesBefore = w.ops('ccAttachVolume').length;
    node.reachable = true; // powered on again: its NC reports its old copies
    await w.run(200);

    expect(node.instances.filter((i) => i.state !== 'terminated')).toEqual([]);
    expect(w.ops('ccTerminateInstances').map((c) => c.req)).toContainEqual(expect.objectContaining({ onHost: A }));
    expect(w.ops('ccAttachVolume')).toHaveLength(attachesBefore);
    expect(w.store.read().volumes[VOL_A]?.attachment).toMatchObject({ instanceId: 'i-00000001', status: 'attached', fencedFrom: { host: A } });
    expect(liveCopy(w, 'i-00000001')).toEqual(copy);
  });

  it('a volume the storage cannot fence stops that restart: nothing runs it elsewhere and the attachment is unchanged', async () => {
    const { w, backend } = await worldWithVolumes();
    backend.failing = true;
    await w.run(100);
    loseNc(w, A, 'inactive');
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');
    expect(w.log).not.toContain('run i-00000001');
    expect(liveCopy(w, 'i-00000001')).toBeUndefined();
    expect(w.store.read().volumes[VOL_A]?.attachment).toEqual(volume(VOL_A, 'i-00000001', '/dev/vdb', 'attached').attachment);
    // Storage back: the owed restart's next attempt fences, restarts and attaches.
    backend.failing = false;
    await w.run(1000);
    expect(liveCopy(w, 'i-00000001')?.instance.volumes).toEqual([expect.objectContaining({ volumeId: VOL_A })]);
    expect(w.store.read().volumes[VOL_A]?.attachment?.status).toBe('attached');
  });

  it('a re-attach refused after the restart leaves the volume attaching, and the next attempt attaches it', async () => {
    const { w } = await worldWithVolumes();
    w.fake.attachRefusals.push('hypervisor of node busy');
    await w.run(100);
    loseNc(w, A, 'inactive');
    await w.run(800);
    const copy = liveCopy(w, 'i-00000001');
    expect(copy?.host).not.toBe(A);
    expect(w.log.filter((l) => l === 'run i-00000001')).toHaveLength(1); // restarted once, re-attached twice
    expect(copy?.instance.volumes).toEqual([expect.objectContaining({ volumeId: VOL_A, status: 'attached' })]);
    expect(w.log.filter((l) => l === `attach ${VOL_A}`)).toHaveLength(2);
    expect(w.store.read().volumes[VOL_A]?.attachment?.status).toBe('attached');
  });
});

describe('host HA and volumes: a restart elsewhere that never happened (sim seed 135)', () => {
  it('the host unfenced by EnableService powers the instance on again and gets back the volume fenced from it', async () => {
    const { w, backend } = await worldWithVolumes();
    for (const h of [B, C]) {
      const n = w.fake.node(h);
      if (n) n.nodeState = 'disabled'; // no room anywhere else: the restart elsewhere is refused
    }
    await w.run(100);
    const node = loseNc(w, A, 'inactive');
    await w.run(800);
    expect(w.state(A)).toBe('FENCED');
    expect(backend.fenced).toContain(`${VOL_A}@${A}`);
    expect(liveCopy(w, 'i-00000001')).toBeUndefined();
    expect(w.store.read().volumes[VOL_A]?.attachment).toMatchObject({ status: 'attaching', fencedFrom: { host: A } });

    // A is powered on again (its domains shut off), and the administrator returns it to service.
    node.reachable = true;
    for (const i of node.instances) {
      i.state = 'stopped';
      i.hypervisorState = 'shutoff';
    }
    await w.run(50);
    await w.runtime.hooks.beforeEnable(A, P);
    node.nodeState = 'enabled';
    await w.runtime.hooks.afterEnable(A, P);
    await w.run(200);

    expect(w.ops('ccStartInstances').map((c) => c.req)).toContainEqual(expect.objectContaining({ onHost: A, instanceIds: expect.arrayContaining(['i-00000001']) }));
    expect(liveCopy(w, 'i-00000001')?.host).toBe(A);
    // Attached once, to the copy powered on again (the restart elsewhere never got that far).
    expect(w.ops('ccAttachVolume').map((c) => c.req)).toEqual([expect.objectContaining({ instanceId: 'i-00000001', volumeId: VOL_A })]);
    expect(w.fake.calls.findIndex((c) => c.op === 'ccAttachVolume')).toBeGreaterThan(w.fake.calls.findIndex((c) => c.op === 'ccStartInstances'));
    expect(w.store.read().volumes[VOL_A]?.attachment).toMatchObject({ instanceId: 'i-00000001', status: 'attached', fencedFrom: { host: A } });
    expect(w.store.read().ha.hosts[A]?.owed ?? null).toBeNull();
  });
});
