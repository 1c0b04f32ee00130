import { describe, expect, it } from 'vitest';
import { slots } from './fakeNodes.js';
import { CTX, harness, id, ids, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';

/** The fake NC's copies of `ids` on `host` are shut off (the host was power-cycled). */
function powerCycled(h: Awaited<ReturnType<typeof harness>>, host: string): void {
  for (const i of h.fake.nc(host).instances) {
    i.state = 'stopped';
    i.hypervisorState = 'shutoff';
  }
}

describe('ccStartInstances (host HA powering on a returned host)', () => {
  it('starts the shut-off instances on that one node and records them running', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq(ids(1, 2)));
    const onA = h.fake.live(A).map((i) => i.instanceId);
    expect(onA).toHaveLength(1);
    powerCycled(h, A);
    const r = await h.ops.ccStartInstances({ instanceIds: onA, onHost: A }, CTX);
    expect(r.failed).toEqual([]);
    expect(r.started).toMatchObject([{ instanceId: onA[0], host: A, state: 'running' }]);
    expect(h.fake.callsOf('start').map((c) => `${c.instanceId}@${c.host}`)).toEqual([`${onA[0]}@${A}`]);
    expect(h.node(A).instances.find((i) => i.instanceId === onA[0])?.state).toBe('running');
  });

  it('reports a refusal per instance and still starts the others', async () => {
    const h = await harness({ nodes: [[A, slots(3)]] });
    await h.run(runReq(ids(1, 2)));
    powerCycled(h, A);
    await h.ops.ccTerminateInstances({ instanceIds: [id(2)] }, CTX);
    const r = await h.ops.ccStartInstances({ instanceIds: [id(2), id(1), id(0x77)], onHost: A }, CTX);
    expect(r.started.map((i) => i.instanceId)).toEqual([id(1)]);
    expect(r.failed.map((f) => [f.instanceId, f.code])).toEqual([[id(2), 'InstanceNotStartable'], [id(0x77), 'InstanceNotFound']]);
  });

  it('refuses a host the CLC fences, and starts nothing there', async () => {
    const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)]] });
    await h.run(runReq([id(1)]));
    const host = h.fake.live(A).length > 0 ? A : B;
    powerCycled(h, host);
    await h.ops.ccSetFencedHosts({ hosts: [host] }, CTX);
    await expect(h.ops.ccStartInstances({ instanceIds: [id(1)], onHost: host }, CTX)).rejects.toMatchObject({ code: 'NodeFenced', fields: { host } });
    expect(h.fake.callsOf('start')).toEqual([]);
  });

  it('refuses an unknown host and an NC that does not answer before starting anything', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await h.run(runReq([id(1)]));
    powerCycled(h, A);
    await expect(h.ops.ccStartInstances({ instanceIds: [id(1)], onHost: '127.0.11.9' }, CTX)).rejects.toMatchObject({ code: 'NodeNotFound' });
    h.fake.nc(A).link = 'down';
    await expect(h.ops.ccStartInstances({ instanceIds: [id(1)], onHost: A }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable', fields: { host: A } });
    expect(h.fake.callsOf('start')).toEqual([]);
  });

  it('a disabled node starts nothing: NodeDisabled per instance', async () => {
    const h = await harness({ nodes: [[A, slots(2)]] });
    await h.run(runReq([id(1)]));
    powerCycled(h, A);
    h.fake.nc(A).nodeState = 'disabled';
    const r = await h.ops.ccStartInstances({ instanceIds: [id(1)], onHost: A }, CTX);
    expect(r).toMatchObject({ started: [], failed: [{ instanceId: id(1), code: 'NodeDisabled' }] });
    expect(h.fake.nc(A).instances[0]?.state).toBe('stopped');
  });
});
