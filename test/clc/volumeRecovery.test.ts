/**
 * Volumes a killed CLC left in flight (issue 18): the recovery table, the nodes' evidence, and the
 * runner over a memory store, a hand-written CC and backend, and the injected clock.
 */
import { describe, expect, it } from 'vitest';
import type { Clusters } from '../../clc/clusters/clusters.js';
import type { VolumeBackend } from '../../clc/core/volumeBackend.js';
import type { VolumeRecord } from '../../clc/core/volumeRecords.js';
import { ATTACHMENT_RECOVERY, inFlight, recoveryStep, type NodeEvidence } from '../../clc/core/volumeRecovery.js';
import { nodeEvidence, VolumeRecovery } from '../../clc/core/volumeRecoveryRunner.js';
import { openMemoryClcStore } from '../../clc/state/clcStore.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import type { CcInstance } from '../../shared/protocol/ccProtocol.js';
import type { AttachmentStatus } from '../../shared/protocol/volumes.js';
import { instance } from '../cc/fakeNodes.js';

const I = 'i-0000000a';
const HOST = '127.0.84.11';
const ZONE = 'cluster01';

function volume(volumeId: string, state: VolumeRecord['state'], status?: AttachmentStatus, over: Partial<VolumeRecord> = {}): VolumeRecord {
  return {
    volumeId, ownerId: 'admin', size: 1, partition: ZONE, volumeType: 'standard', createTime: 1, state,
    ...(state !== 'creating' ? { path: `/srv/volumes/${volumeId}.img` } : {}),
    ...(status ? { attachment: { instanceId: I, device: '/dev/sdf', status, attachTime: 1, deleteOnTermination: false } } : {}),
    ...over,
  };
}

const held = (status?: AttachmentStatus): NodeEvidence => ({ kind: 'held', host: HOST, status });

describe('recoveryStep: what a volume left in flight becomes', () => {
  it.each<[string, VolumeRecord, NodeEvidence, string]>([
    ['creating: made again (the backend is idempotent)', volume('vol-00000001', 'creating'), { kind: 'unknown' }, 'finish-create'],
    ['deleting: removed again', volume('vol-00000001', 'deleting'), { kind: 'unknown' }, 'finish-delete'],
    ['available: nothing', volume('vol-00000001', 'available'), { kind: 'unknown' }, 'none'],
    ['attached: nothing', volume('vol-00000001', 'in-use', 'attached'), held(), 'none'],
    ['attaching, the node holds it attached', volume('vol-00000001', 'in-use', 'attaching'), held('attached'), 'attachConfirmed'],
    ['attaching, the node holds the instance without it', volume('vol-00000001', 'in-use', 'attaching'), held(), 'attachRefused'],
    ['attaching, the node says detached', volume('vol-00000001', 'in-use', 'attaching'), held('detached'), 'attachRefused'],
    ['attaching, no node holds the instance', volume('vol-00000001', 'in-use', 'attaching'), { kind: 'gone' }, 'attachRefused'],
    ['attaching, the node is itself attaching', volume('vol-00000001', 'in-use', 'attaching'), held('attaching'), 'wait'],
    ['attaching, the partition did not answer', volume('vol-00000001', 'in-use', 'attaching'), { kind: 'unknown' }, 'wait'],
    ['attaching, host HA\'s re-attach to a restarted copy', volume('vol-00000001', 'in-use', 'attaching', {
      attachment: { instanceId: I, device: '/dev/sdf', status: 'attaching', attachTime: 1, deleteOnTermination: false, fencedFrom: { host: HOST, at: 1, detail: 'x' } },
    }), held(), 'wait'],
    ['detaching, the node still holds it attached', volume('vol-00000001', 'in-use', 'detaching'), held('attached'), 'detachRefused'],
    ['detaching, the node let it go', volume('vol-00000001', 'in-use', 'detaching'), held(), 'detachConfirmed'],
    ['detaching, no node holds the instance', volume('vol-00000001', 'in-use', 'detaching'), { kind: 'gone' }, 'detachConfirmed'],
    ['detaching, the node is itself detaching', volume('vol-00000001', 'in-use', 'detaching'), held('detaching'), 'wait'],
    ['detaching, the partition did not answer', volume('vol-00000001', 'in-use', 'detaching'), { kind: 'unknown' }, 'wait'],
  ])('%s', (_n, v, evidence, expected) => {
    const step = recoveryStep(v, evidence);
    expect(step.kind === 'settle' ? step.event : step.kind).toBe(expected);
  });

  it('the table has one row per (status, node word), and only the in-flight states count as in flight', () => {
    const keys = ATTACHMENT_RECOVERY.map((r) => `${r.status}/${r.node}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(6);
    expect(['creating', 'deleting'].map((s) => inFlight(volume('vol-00000001', s as VolumeRecord['state'])))).toEqual([true, true]);
    expect(['available', 'error'].map((s) => inFlight(volume('vol-00000001', s as VolumeRecord['state'])))).toEqual([false, false]);
    expect(inFlight(volume('vol-00000001', 'in-use', 'attached'))).toBe(false);
  });
});

describe('nodeEvidence', () => {
  const copy = (over: Partial<CcInstance> = {}): CcInstance => ({ ...instance(I), host: HOST, partition: ZONE, ...over });
  const attached = { volumeId: 'vol-00000001', device: '/dev/sdf', path: '/srv/volumes/vol-00000001.img', status: 'attached' as const };
  it.each<[string, { instances: CcInstance[]; complete?: boolean } | undefined, NodeEvidence]>([
    ['no answer', undefined, { kind: 'unknown' }],
    ['an incomplete answer', { instances: [], complete: false }, { kind: 'unknown' }],
    ['not listed', { instances: [] }, { kind: 'gone' }],
    ['only a tombstone', { instances: [copy({ state: 'terminated', volumes: [attached] })] }, { kind: 'gone' }],
    ['listed with it', { instances: [copy({ volumes: [attached] })] }, held('attached')],
    ['listed without it', { instances: [copy()] }, held()],
    ['two live copies (moving)', { instances: [copy(), copy({ host: '127.0.84.12' })] }, { kind: 'unknown' }],
  ])('%s', (_n, report, expected) => {
    expect(nodeEvidence(report, I, 'vol-00000001')).toEqual(expected);
  });
});

/** A CC that answers ccDescribeInstances with `instances` (or fails while `down`), counting the asks. */
class OneCc implements Clusters {
  readonly partitions = [{ name: ZONE, endpoint: 'http://127.0.84.1:8774' }];
  instances: CcInstance[] = [];
  down = false;
  asks = 0;
  call(_p: string, op: string): Promise<any> {
    if (op !== 'ccDescribeInstances') throw new Error(`the fake CC answers ccDescribeInstances only, not ${op}`);
    this.asks++;
    if (this.down) return Promise.reject(Object.assign(new Error('down'), { code: 'ServiceUnavailable', fields: { delivered: 'no' } }));
    return Promise.resolve({ partition: ZONE, instances: this.instances, complete: true });
  }
}

/** Files in memory; `fail` makes create and remove refuse. */
class MemoryBackend implements VolumeBackend {
  readonly kind = 'memory';
  readonly files = new Map<string, number>();
  fail = false;
  create(volumeId: string, sizeGiB: number): Promise<string> {
    if (this.fail) return Promise.reject(new Error('disk full'));
    this.files.set(volumeId, sizeGiB);
    return Promise.resolve(`/srv/volumes/${volumeId}.img`);
  }
  remove(volumeId: string): Promise<void> {
    if (this.fail) return Promise.reject(new Error('read-only file system'));
    this.files.delete(volumeId);
    return Promise.resolve();
  }
  fenceHost(): Promise<string> {
    return Promise.resolve('nothing');
  }
}

async function setUp(volumes: VolumeRecord[]) {
  const store = await openMemoryClcStore();
  await store.update((d) => { for (const v of volumes) d.volumes[v.volumeId] = v; });
  const clock = new ManualClock(1000);
  const cc = new OneCc();
  const backend = new MemoryBackend();
  const recovery = new VolumeRecovery({ store, clusters: cc, clock, logger: silentLogger(), backend, settleMs: 20_000 });
  return { store, clock, cc, backend, recovery };
}

/** Lets the timer's pass (a chain of promises) run to its end. */
async function drain(recovery: VolumeRecovery, clock: ManualClock, ms: number): Promise<void> {
  clock.advance(ms);
  for (let k = 0; k < 50; k++) await Promise.resolve();
  await recovery.idle();
}

describe('VolumeRecovery (the runner)', () => {
  it('finishes a create and a delete at start: available with its file, gone with its file; a failing backend leaves error', async () => {
    const t = await setUp([volume('vol-00000001', 'creating'), volume('vol-00000002', 'deleting')]);
    t.backend.files.set('vol-00000002', 1);
    await t.recovery.start();
    expect(t.store.read().volumes['vol-00000001']).toMatchObject({ state: 'available', path: '/srv/volumes/vol-00000001.img' });
    expect(t.backend.files.get('vol-00000001')).toBe(1);
    expect(t.store.read().volumes['vol-00000002']).toBeUndefined();
    expect(t.backend.files.has('vol-00000002')).toBe(false);
    expect(t.recovery.waiting()).toEqual([]);

    const f = await setUp([volume('vol-00000003', 'creating'), volume('vol-00000004', 'deleting')]);
    f.backend.fail = true;
    await f.recovery.start();
    expect(f.store.read().volumes['vol-00000003']).toMatchObject({ state: 'error', error: expect.stringMatching(/disk full/) });
    expect(f.store.read().volumes['vol-00000004']).toMatchObject({ state: 'error', error: expect.stringMatching(/read-only/) });
  });

  it('looks at attachments only settleMs after start, then settles them from the node\'s report', async () => {
    const t = await setUp([
      volume('vol-00000001', 'in-use', 'attaching'), volume('vol-00000002', 'in-use', 'detaching'),
      volume('vol-00000003', 'in-use', 'detaching'), volume('vol-00000004', 'in-use', 'attached'),
    ]);
    const path = (id: string) => `/srv/volumes/${id}.img`;
    t.cc.instances = [{ ...instance(I), host: HOST, partition: ZONE, volumes: [
      { volumeId: 'vol-00000001', device: '/dev/sdf', path: path('vol-00000001'), status: 'attached' },
      { volumeId: 'vol-00000002', device: '/dev/sdg', path: path('vol-00000002'), status: 'attached' },
      { volumeId: 'vol-00000004', device: '/dev/sdh', path: path('vol-00000004'), status: 'attached' },
    ] }];
    await t.recovery.start();
    expect(t.cc.asks).toBe(0);
    await drain(t.recovery, t.clock, 19_999);
    expect(t.cc.asks).toBe(0);
    await drain(t.recovery, t.clock, 1);
    expect(t.cc.asks).toBe(1);
    const v = t.store.read().volumes;
    expect(v['vol-00000001']).toMatchObject({ state: 'in-use', attachment: { status: 'attached' } });
    expect(v['vol-00000002']).toMatchObject({ state: 'in-use', attachment: { status: 'attached' } });
    expect(v['vol-00000003']?.state).toBe('available');
    expect(v['vol-00000003']?.attachment).toBeUndefined();
    expect(t.recovery.waiting()).toEqual([]);
  });

  it('a partition that does not answer is asked again each settleMs until it does; a request that moved the volume on wins', async () => {
    const t = await setUp([volume('vol-00000001', 'in-use', 'attaching'), volume('vol-00000002', 'in-use', 'detaching')]);
    t.cc.down = true;
    await t.recovery.start();
    await drain(t.recovery, t.clock, 20_000);
    await drain(t.recovery, t.clock, 20_000);
    expect(t.cc.asks).toBe(2);
    expect(t.recovery.waiting().sort()).toEqual(['vol-00000001', 'vol-00000002']);
    // This CLC's own DetachVolume Force=true settled vol-00000002 meanwhile: no longer the recovery's.
    await t.store.update((d) => {
      const r = d.volumes['vol-00000002'];
      if (r) { delete r.attachment; r.state = 'available'; }
    });
    t.cc.down = false;
    await drain(t.recovery, t.clock, 20_000);
    expect(t.store.read().volumes['vol-00000001']).toMatchObject({ state: 'available' });
    expect(t.store.read().volumes['vol-00000002']).toMatchObject({ state: 'available' });
    expect(t.recovery.waiting()).toEqual([]);
    await drain(t.recovery, t.clock, 60_000);
    expect(t.cc.asks).toBe(3);
  });
});
