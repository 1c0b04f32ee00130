/** ncStopInstance / ncStartInstance (userStart) / ncRebootInstance through the NodeController and a FakeDriver (issue 18 part 5). */
import { describe, expect, it } from 'vitest';
import { openMemoryNcStore } from '../../nc/ncStore.js';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import { harness, runRequest } from './fixtures.js';
import { NcErrors } from '../../nc/errors.js';
import type { VolumeConnector } from '../../nc/volumeConnector.js';

const A = 'i-0000000a';
const strip = (log: readonly string[]): string[] => log.map((l) => l.replace(/ \{.*\}$/, ''));

describe('ncStopInstance', () => {
  it('persists the stop, shuts the domain down, then replies; the instance is stopped and holds nothing', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.log.length = 0;
    const res = await h.controller.stopInstance({ instanceId: A, force: false });
    h.log.push('reply');
    expect(strip(h.log)).toEqual(['persist', `shutdown ${A}`, 'reply']);
    expect(h.store.read().instances[A]?.userStopped).toBe(true);
    expect(res).toMatchObject({ previousState: 'running', instance: { state: 'stopped', hypervisorState: 'shutoff', userStopped: true } });
    const node = await h.controller.describe();
    expect(node.used).toEqual({ cores: 0, memoryMiB: 0, diskGiB: 0 });
    // Idempotent: nothing written, nothing asked.
    h.log.length = 0;
    expect(await h.controller.stopInstance({ instanceId: A, force: true })).toMatchObject({ previousState: 'stopped', instance: { state: 'stopped' } });
    expect(h.log).toEqual([]);
  });

  it('force is passed to the hypervisor', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    await h.controller.stopInstance({ instanceId: A, force: true });
    expect(h.driver.calls).toContain(`shutdown ${A} force`);
  });

  it('a restarted NC keeps a stopped instance stopped, and host HA\'s start is refused; its user\'s start runs it', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.run(runRequest(A));
    await h.controller.stopInstance({ instanceId: A, force: false });
    await h.controller.stop();
    const again = await harness({ store, driver: h.driver });
    const node = await again.controller.describe();
    expect(node.instances.find((i) => i.instanceId === A)).toMatchObject({ state: 'stopped', userStopped: true });
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
    await expect(again.controller.startInstance(A)).rejects.toMatchObject({ code: 'InstanceNotStartable' });
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
    const started = await again.controller.startInstance(A, true);
    expect(started.instance).toMatchObject({ state: 'running', hypervisorState: 'running' });
    expect(started.instance.userStopped).toBeUndefined();
    expect(store.read().instances[A]?.userStopped).toBeUndefined();
  });

  it('start-up finishes a stop a crash left half-done: a stopped record powers its running domain off', async () => {
    const store = await openMemoryNcStore();
    const h = await harness({ store });
    await h.controller.run(runRequest(A));
    await h.controller.stop();
    await store.update((d) => { const r = d.instances[A]; if (r) r.userStopped = true; });
    const again = await harness({ store, driver: h.driver });
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
    expect((await again.controller.describe()).instances[0]).toMatchObject({ state: 'stopped', userStopped: true });
  });

  it('a hypervisor refusal undoes the record: nothing changed', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    const before = structuredClone(h.store.read());
    h.driver.failNext('shutdown', HypervisorErrors.make('DomainStateConflict', { id: A, host: h.driver.host, state: 'running', operation: 'shutdown' }));
    await expect(h.controller.stopInstance({ instanceId: A, force: false })).rejects.toMatchObject({ code: 'HypervisorRefused' });
    expect(h.store.read().instances).toEqual(before.instances);
    expect(h.driver.domains.get(A)?.state).toBe('running');
  });

  it('refuses an unknown, a terminated and a paused instance, changing nothing', async () => {
    const h = await harness();
    const B = 'i-0000000b';
    await h.controller.run(runRequest(A));
    await h.controller.run(runRequest(B));
    await h.controller.terminate(A);
    await h.controller.pauseInstance({ instanceId: B, paused: true });
    const before = structuredClone(h.store.read());
    h.log.length = 0;
    await expect(h.controller.stopInstance({ instanceId: 'i-0000000f', force: false })).rejects.toMatchObject({ code: 'InstanceNotFound', status: 404 });
    await expect(h.controller.stopInstance({ instanceId: A, force: false })).rejects.toMatchObject({ code: 'InstanceStateConflict', status: 409 });
    await expect(h.controller.stopInstance({ instanceId: B, force: false })).rejects.toMatchObject({ code: 'InstanceStateConflict', status: 409 });
    await expect(h.controller.rebootInstance(A)).rejects.toMatchObject({ code: 'InstanceStateConflict' });
    await expect(h.controller.rebootInstance(B)).rejects.toMatchObject({ code: 'InstanceStateConflict' });
    expect(h.store.read()).toEqual(before);
    expect(h.log).toEqual([]);
  });
});

describe('ncRebootInstance', () => {
  it('reboots a running instance in place, persisting nothing; a stopped one is refused', async () => {
    const h = await harness();
    await h.controller.run(runRequest(A));
    h.log.length = 0;
    const res = await h.controller.rebootInstance(A);
    expect(strip(h.log)).toEqual([`reboot ${A}`]);
    expect(res.instance).toMatchObject({ state: 'running' });
    await h.controller.stopInstance({ instanceId: A, force: false });
    await expect(h.controller.rebootInstance(A)).rejects.toMatchObject({ code: 'InstanceStateConflict' });
  });
});

describe('ncRunInstance of a cold move (stopped: true)', () => {
  it('records the instance stopped by its user and only defines its domain: not started, holding nothing; its user starts it', async () => {
    const h = await harness();
    h.log.length = 0;
    const res = await h.controller.run({ ...runRequest(A), stopped: true });
    expect(strip(h.log).filter((l) => l !== 'persist')).toEqual([`define ${A}`]);
    expect(res.instance).toMatchObject({ state: 'stopped', hypervisorState: 'shutoff', userStopped: true });
    expect(h.store.read().instances[A]).toMatchObject({ phase: 'running', userStopped: true });
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
    expect((await h.controller.describe()).used).toEqual({ cores: 0, memoryMiB: 0, diskGiB: 0 });
    expect((await h.controller.startInstance(A, true)).instance).toMatchObject({ state: 'running' });
  });
});

describe('ncRunInstance with volumes (issue 18: a restart elsewhere, a re-homed stopped instance)', () => {
  const VOL = { volumeId: 'vol-0000000a', device: '/dev/vdb', path: '/srv/volumes/vol-0000000a.img' };

  it('persists them attaching with the record, defines the domain with them before it runs, then records them attached', async () => {
    const h = await harness();
    let atCreate: unknown;
    h.driver.afterCreate = () => { atCreate = h.store.read().instances[A]?.volumes; return Promise.resolve(); };
    const res = await h.controller.run({ ...runRequest(A), volumes: [VOL] });
    expect(atCreate).toEqual([{ ...VOL, status: 'attaching' }]);
    expect(h.driver.domains.get(A)).toMatchObject({ state: 'running', volumes: [VOL] });
    expect(h.store.read().instances[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    expect(res.instance.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    // The CLC's confirming attach afterwards changes nothing: the NC answers it attached already.
    h.log.length = 0;
    await h.controller.attachVolume({ instanceId: A, ...VOL });
    expect(strip(h.log).filter((l) => l.startsWith('attach'))).toEqual([]);
  });

  it('a cold move defines the stopped copy with them; its user\'s start boots it holding them', async () => {
    // The start connects the volumes first (sim seed 135): a storage every host reaches.
    const h = await harness({ volumeConnector: { connect: () => Promise.resolve(), disconnect: () => Promise.resolve() } });
    await h.controller.run({ ...runRequest(A), stopped: true, volumes: [VOL] });
    expect(h.driver.domains.get(A)).toMatchObject({ state: 'shutoff', volumes: [VOL] });
    expect(h.store.read().instances[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    await h.controller.startInstance(A, true);
    expect(h.driver.domains.get(A)).toMatchObject({ state: 'running', volumes: [VOL] });
  });
});

describe('ncStartInstance and volumes (sim seed 135)', () => {
  const VOL = { volumeId: 'vol-0000000a', device: '/dev/sdf', path: '/shared/volumes/vol-0000000a.img' };

  /** Connects by logging into the harness's log, or refuses every volume when `unreachable`. */
  const connector = (log: () => string[], unreachable: () => boolean): VolumeConnector => ({
    connect: (instanceId, volumes) => {
      if (unreachable()) return Promise.reject(NcErrors.make('VolumeUnavailable', { host: 'h', instanceId, volumeId: volumes[0]?.volumeId ?? '', detail: 'ENOENT' }));
      log().push(`connect ${instanceId} ${volumes.map((v) => v.volumeId).join(',')}`);
      return Promise.resolve();
    },
    disconnect: () => Promise.resolve(),
  });

  it('connects the instance\'s volumes before its shut-off domain starts again', async () => {
    let log: string[] = [];
    const h = await harness({ volumeConnector: connector(() => log, () => false) });
    log = h.log;
    await h.controller.run(runRequest(A));
    await h.controller.attachVolume({ instanceId: A, ...VOL });
    await h.controller.stopInstance({ instanceId: A, force: false });
    h.log.length = 0;
    await h.controller.startInstance(A, true);
    const order = strip(h.log).filter((l) => /^(connect|create|persist)/.test(l));
    expect(order[0]).toBe(`connect ${A} ${VOL.volumeId}`);
    expect(order.slice(1)).toEqual(['persist', `create ${A}`]);
    expect(h.driver.domains.get(A)?.state).toBe('running');
  });

  it('a volume the host cannot reach refuses the start, and nothing changes', async () => {
    let unreachable = false;
    const h = await harness({ volumeConnector: connector(() => [], () => unreachable) });
    await h.controller.run(runRequest(A));
    await h.controller.attachVolume({ instanceId: A, ...VOL });
    await h.controller.stopInstance({ instanceId: A, force: false });
    unreachable = true;
    const before = structuredClone(h.store.read().instances[A]);
    await expect(h.controller.startInstance(A, true)).rejects.toMatchObject({ code: 'VolumeUnavailable' });
    expect(h.store.read().instances[A]).toEqual(before);
    expect(h.driver.domains.get(A)?.state).toBe('shutoff');
  });
});
