/**
 * An attach or detach the CC answers is in its view at once, before any poll of the node brings it
 * (issue 18): a MigrateInstances sent right after plans from the view, and a destination prepared
 * from a view without the just-attached volume would take the instance over without it (a CI run of
 * volumeMigration.test.ts once showed that drain). The node's describe is held for the whole test, so
 * only the CC's own answer handling can put the attachment there.
 */
import { describe, expect, it } from 'vitest';
import { applyAttachment, applyReport, initialView } from '../../cc/view.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { instance, slots } from './fakeNodes.js';
import { CTX, harness, id, latch, runReq } from './harness.js';

const A = '127.0.80.41';
const B = '127.0.80.42';
const PATH = '/srv/ferry-shared/volumes/vol-00000001.img';

const volumesIn = (h: Awaited<ReturnType<typeof harness>>, host: string, instanceId: string): unknown =>
  h.node(host).instances.find((i) => i.instanceId === instanceId)?.volumes;

describe('the CC view after an attach or a detach', () => {
  it('holds the attachment the NC answered, and loses the detached one, while every poll of the node is held', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    h.fake.nc(B).nodeState = 'disabled';
    await h.keeper.refreshHosts([B], 500);
    await h.run(runReq([id(1)]));
    await h.settle();
    expect(volumesIn(h, A, id(1))).toBeUndefined();
    const held = latch();
    h.fake.gate = async (call) => { if (call.op === 'describe') await held.promise; };

    await h.ops.ccAttachVolume({ instanceId: id(1), volumeId: 'vol-00000001', device: '/dev/vdb', path: PATH }, CTX);
    expect(volumesIn(h, A, id(1))).toEqual([{ volumeId: 'vol-00000001', device: '/dev/vdb', path: PATH, status: 'attached' }]);

    await h.ops.ccDetachVolume({ instanceId: id(1), volumeId: 'vol-00000001' }, CTX);
    expect(volumesIn(h, A, id(1))).toBeUndefined();
    held.open();
    await h.settle();
    expect(volumesIn(h, A, id(1)) ?? []).toEqual([]);
  });
});

describe('an attach whose answer was lost', () => {
  it('is refused to the caller only after the CC asked the node again: the view holds what the node did', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await h.run(runReq([id(1)]));
    await h.settle();
    h.fake.nc(A).dropReplies = 1;
    await expect(h.ops.ccAttachVolume({ instanceId: id(1), volumeId: 'vol-00000001', device: '/dev/vdb', path: PATH }, CTX))
      .rejects.toMatchObject({ code: 'NodeUnreachable' });
    expect(volumesIn(h, A, id(1))).toEqual([{ volumeId: 'vol-00000001', device: '/dev/vdb', path: PATH, status: 'attached' }]);
  });
});

describe('applyAttachment', () => {
  const node = (volumes?: NcNode['instances'][number]['volumes']): NcNode => ({
    host: A, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: slots(2), used: slots(1),
    instances: [{ ...instance(id(1)), ...(volumes ? { volumes } : {}) }], plans: [], incoming: [],
  });
  const v = (volumeId: string, device: string, status: 'attached' | 'detached' | 'attaching' = 'attached') => ({ volumeId, device, path: `/v/${volumeId}`, status });
  const cases: readonly [string, NcNode['instances'][number]['volumes'] | undefined, ReturnType<typeof v>, unknown][] = [
    ['attach to none', undefined, v('vol-1', '/dev/vdb'), [v('vol-1', '/dev/vdb')]],
    ['attach beside one', [v('vol-1', '/dev/vdb')], v('vol-2', '/dev/vdc'), [v('vol-1', '/dev/vdb'), v('vol-2', '/dev/vdc')]],
    ['the same volume again replaces it', [v('vol-1', '/dev/vdb', 'attaching')], v('vol-1', '/dev/vdb'), [v('vol-1', '/dev/vdb')]],
    ['detach the only one', [v('vol-1', '/dev/vdb')], v('vol-1', '/dev/vdb', 'detached'), undefined],
    ['detach one of two', [v('vol-1', '/dev/vdb'), v('vol-2', '/dev/vdc')], v('vol-1', '/dev/vdb', 'detached'), [v('vol-2', '/dev/vdc')]],
    ['detach one not held', undefined, v('vol-1', '/dev/vdb', 'detached'), undefined],
  ];
  it.each(cases)('%s', (_name, before, attachment, after) => {
    const view = applyReport(initialView('cluster01', [A]), A, node(before), 1);
    const next = applyAttachment(view, A, id(1), attachment);
    expect(next.entries[0]!.node.instances[0]!.volumes).toEqual(after);
  });

  it('leaves the view as it is for an instance it does not list', () => {
    const view = initialView('cluster01', [A], []);
    expect(applyAttachment(view, A, id(9), v('vol-1', '/dev/vdb'))).toBe(view);
    expect(applyAttachment(view, B, id(1), v('vol-1', '/dev/vdb'))).toBe(view);
  });
});
