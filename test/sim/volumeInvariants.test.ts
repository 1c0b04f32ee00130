/**
 * Issue 18 in the simulator: invariant 9 (volumes) over hand-made truths, each case must fire when
 * broken; the simulated storage; the ledger's stops and what the settled check asks of a stopped
 * instance; and the schedule's volume and stop/start/reboot events, drawn from their own streams.
 */
import { describe, expect, it } from 'vitest';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import { NC_STORE_OPTIONS, type NcSnapshot } from '../../nc/ncStore.js';
import { checkSettled, checkStep } from '../../sim/invariants.js';
import { Ledger } from '../../sim/ledger.js';
import { settingsFor } from '../../sim/runSeed.js';
import { generateSchedule, powerEvents, volumeEvents, type SimEvent } from '../../sim/schedule.js';
import { SimVolumeStorage } from '../../sim/simVolumes.js';
import type { HostTruth } from '../../sim/truth.js';
import { checkVolumeStep } from '../../sim/volumeInvariants.js';

const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
const CAP = { cores: 2, memoryMiB: 512, diskGiB: 10 };
const [A, B] = ['i-0000000a', 'i-0000000b'];
const VOL = 'vol-0000000a';

function dom(id: string, state: DomainInfo['state'], volumes: string[] = []): DomainInfo {
  return {
    id, state, resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1', diskPath: `/x/${id}`, startedAt: 0,
    ...(volumes.length > 0 ? { volumes: volumes.map((v) => ({ volumeId: v, device: '/dev/sdf', path: `/shared/volumes/${v}.img` })) } : {}),
  };
}

function nc(ids: string[], stopped: string[] = []): NcSnapshot {
  const s = NC_STORE_OPTIONS.initial();
  for (const id of ids) {
    s.instances[id] = {
      instanceId: id, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', vmType: SMALL, launchTime: 0, phase: 'running', since: 0, migrationState: 'none',
      ...(stopped.includes(id) ? { userStopped: true as const } : {}),
    };
  }
  return s;
}

const host = (name: string, domains: DomainInfo[], snap?: NcSnapshot): HostTruth => ({ host: name, poweredOn: true, domains, nc: snap });
const kinds = (vs: readonly { invariant: string }[]): string[] => vs.map((v) => v.invariant);

function storage(o: { removed?: string[]; fenced?: string[] } = {}): SimVolumeStorage {
  const s = new SimVolumeStorage('/shared', () => undefined);
  for (const v of o.removed ?? []) s.removed.add(v);
  for (const f of o.fenced ?? []) s.fenced.add(f);
  return s;
}

describe('invariant 9: volumes', () => {
  it.each<[string, HostTruth[], SimVolumeStorage, string[]]>([
    ['one running copy holds it', [host('h1', [dom(A, 'running', [VOL])]), host('h2', [dom(B, 'running')])], storage(), []],
    ['two instances on two hosts hold it, both running', [host('h1', [dom(A, 'running', [VOL])]), host('h2', [dom(B, 'running', [VOL])])], storage(), ['9 volume twice']],
    ['two copies of one instance run with it (a restart before the fence)', [host('h1', [dom(A, 'running', [VOL])]), host('h2', [dom(A, 'running', [VOL])])], storage(), ['9 volume twice']],
    ['a switch-over: the source paused, the destination running', [host('h1', [dom(A, 'paused', [VOL])]), host('h2', [dom(A, 'running', [VOL])])], storage(), []],
    ['a suspended copy writes again once resumed: it counts', [host('h1', [dom(A, 'suspended', [VOL])]), host('h2', [dom(B, 'running', [VOL])])], storage(), ['9 volume twice']],
    ['a shut-off copy (a fenced host back, not started) and a running one', [host('h1', [dom(A, 'shutoff', [VOL])]), host('h2', [dom(A, 'running', [VOL])])], storage(), []],
    ['a deleted volume held by a running copy', [host('h1', [dom(A, 'running', [VOL])])], storage({ removed: [VOL] }), ['9 volume deleted']],
    ['a deleted volume in a shut-off definition only', [host('h1', [dom(A, 'shutoff', [VOL])])], storage({ removed: [VOL] }), []],
    ['a host the storage fenced from it runs a copy holding it', [host('h1', [dom(A, 'running', [VOL])])], storage({ fenced: [`${VOL} h1`] }), ['9 volume fenced']],
    ['fenced from another host only', [host('h1', [dom(A, 'running', [VOL])])], storage({ fenced: [`${VOL} h2`] }), []],
  ])('%s', (_name, truth, s, expected) => {
    expect(kinds(checkVolumeStep(truth, s))).toEqual(expected);
  });

  it('a fenced host gets the volume back only by a grant: an attach routed there, or a connect', async () => {
    const s = storage();
    await s.backend.fenceHost(VOL, s.path(VOL), 'h1');
    const truth = [host('h1', [dom(A, 'running', [VOL])])];
    expect(kinds(checkVolumeStep(truth, s))).toEqual(['9 volume fenced']);
    s.granted(VOL, 'h1');
    expect(checkVolumeStep(truth, s)).toEqual([]);
    await s.backend.fenceHost(VOL, s.path(VOL), 'h1');
    await s.backend.create(VOL, 1);
    await s.connector('h1').connect(A, [{ volumeId: VOL, device: '/dev/sdf', path: s.path(VOL) }]);
    expect(checkVolumeStep(truth, s)).toEqual([]);
  });
});

describe('the simulated volume storage', () => {
  it('creates, removes (remembered), and refuses to connect a volume it does not hold', async () => {
    const s = storage();
    expect(await s.backend.create(VOL, 4)).toBe('/shared/volumes/vol-0000000a.img');
    await expect(s.connector('h1').connect(A, [{ volumeId: VOL, device: '/dev/sdf', path: s.path(VOL) }])).resolves.toBeUndefined();
    await s.backend.remove(VOL);
    expect(s.removed.has(VOL)).toBe(true);
    await expect(s.connector('h1').connect(A, [{ volumeId: VOL, device: '/dev/sdf', path: s.path(VOL) }])).rejects.toMatchObject({ code: 'VolumeUnavailable' });
  });
});

describe('the ledger and stopped instances', () => {
  it('a stop acknowledged is stopped; one overtaken by a start is unsure; a refusal leaves what was', () => {
    const l = new Ledger();
    l.acknowledgeRun([A]);
    const stop = l.powerSent(A, 'stopped');
    expect(l.power.get(A)).toBe('unsure');
    stop.acknowledged();
    expect(l.isStopped(A)).toBe(true);
    const start = l.powerSent(A, 'running');
    const again = l.powerSent(A, 'stopped');
    start.acknowledged(); // overtaken: the stop sent after it may land after it
    expect(l.power.get(A)).toBe('unsure');
    again.refused();
    expect(l.power.get(A)).toBe('unsure');
    // Two requests in flight together may run in either order at the NC: neither answer settles it.
    const raced = new Ledger();
    const s1 = raced.powerSent(A, 'stopped');
    const s2 = raced.powerSent(A, 'running');
    s2.acknowledged();
    s1.acknowledged();
    expect(raced.power.get(A)).toBe('unsure');
    raced.powerSent(A, 'stopped').acknowledged(); // alone again: settled
    expect(raced.isStopped(A)).toBe(true);
    const fresh = new Ledger();
    fresh.powerSent(B, 'stopped').refused();
    expect(fresh.power.has(B)).toBe(false);
  });

  const ledger = (power?: 'stopped' | 'unsure'): Ledger => {
    const l = new Ledger();
    l.acknowledgeRun([A]);
    if (power) l.power.set(A, power);
    return l;
  };
  it.each<[string, HostTruth[], Ledger, string[]]>([
    ['stopped: shut off, its record says so', [host('h1', [dom(A, 'shutoff')], nc([A], [A]))], ledger('stopped'), []],
    ['stopped but running', [host('h1', [dom(A, 'running')], nc([A]))], ledger('stopped'), ['1 settled']],
    ['stopped, shut off, but its record forgot the stop (HA would start it)', [host('h1', [dom(A, 'shutoff')], nc([A]))], ledger('stopped'), ['1 settled']],
    ['never stopped and shut off', [host('h1', [dom(A, 'shutoff')], nc([A]))], ledger(), ['1 settled']],
    ['unsure: running', [host('h1', [dom(A, 'running')], nc([A]))], ledger('unsure'), []],
    ['unsure: stopped', [host('h1', [dom(A, 'shutoff')], nc([A], [A]))], ledger('unsure'), []],
    ['unsure: a start that cleared the mark and died before the domain started', [host('h1', [dom(A, 'shutoff')], nc([A]))], ledger('unsure'), []],
    ['unsure: gone', [host('h1', [], nc([]))], ledger('unsure'), ['1 settled']],
    ['stopped, its host\'s nc.json lost since (the mark gone with it; the CLC keeps the stop)', [host('h1', [dom(A, 'shutoff')], nc([A]))], (() => { const l = ledger('stopped'); l.storeLost('h1'); return l; })(), []],
    ['stopped, another host\'s nc.json lost', [host('h1', [dom(A, 'shutoff')], nc([A]))], (() => { const l = ledger('stopped'); l.storeLost('h2'); return l; })(), ['1 settled']],
  ])('settled, %s', (_name, truth, l, expected) => {
    expect(kinds(checkSettled(truth, l))).toEqual(expected);
  });

  it('after a lost nc.json, re-adopted records of shut-off domains are not counted (they lost their stop mark); running ones are', () => {
    // As the restarted NC comes up: disabled (invariant 7 then holds too).
    const truth = [host('h1', [dom(A, 'shutoff'), dom(B, 'running'), dom('i-0000000c', 'running')], { ...nc([A, B, 'i-0000000c']), nodeState: 'disabled' })];
    expect(kinds(checkStep(truth, new Ledger(), CAP))).toEqual(['3 capacity']);
    const l = new Ledger();
    l.storeLost('h1');
    expect(checkStep(truth, l, CAP)).toEqual([]);
    const over = [host('h1', [dom(A, 'running'), dom(B, 'running'), dom('i-0000000c', 'running')], { ...nc([A, B, 'i-0000000c']), nodeState: 'disabled' })];
    expect(kinds(checkStep(over, l, CAP))).toEqual(['3 capacity', '3 capacity']);
  });

  it('a stopped instance holds nothing: its room reused is no over-commitment (invariant 3, as nc/usage.ts counts)', () => {
    const truth = [host('h1', [dom(A, 'shutoff'), dom(B, 'running'), dom('i-0000000c', 'running')], nc([A, B, 'i-0000000c'], [A]))];
    expect(checkStep(truth, new Ledger(), CAP)).toEqual([]);
    const over = [host('h1', [dom(A, 'running'), dom(B, 'running'), dom('i-0000000c', 'running')], nc([A, B, 'i-0000000c']))];
    expect(kinds(checkStep(over, new Ledger(), CAP))).toEqual(['3 capacity', '3 capacity']);
  });
});

describe('the schedule: volumes and stop/start/reboot', () => {
  const NEW = new Set(['createVolume', 'attachVolume', 'detachVolume', 'deleteVolume', 'stopInstance', 'startInstance', 'rebootInstance']);
  const seeds = Array.from({ length: 40 }, (_, i) => i + 1);
  const strip = (es: readonly SimEvent[]): string[] => es.map((e) => JSON.stringify(e)).sort();

  it('they come from their own streams: the new events are exactly volumeEvents and powerEvents, the rest does not depend on them', () => {
    for (const seed of seeds) {
      const s = settingsFor(seed);
      const events = generateSchedule(seed, s).events;
      expect(strip(events.filter((e) => NEW.has(e.kind)))).toEqual(strip([...volumeEvents(seed, s), ...powerEvents(seed, s)]));
      // Same seed, same schedule.
      expect(generateSchedule(seed, s).events).toEqual(events);
    }
  });

  it('in most seeds, not all: volumes created in a partition of the cloud early, attached later; every start follows a stop', () => {
    const drawn = seeds.map((seed) => {
      const s = settingsFor(seed);
      const v = volumeEvents(seed, s);
      const p = powerEvents(seed, s);
      for (const e of v) {
        if (e.kind === 'createVolume') {
          expect(s.clusters.map((c) => c.partition)).toContain(e.partition);
          expect(e.at).toBeLessThanOrEqual(4000);
        }
        if (e.kind === 'attachVolume') expect(e.at).toBeGreaterThanOrEqual(2000);
      }
      const stops = p.filter((e) => e.kind === 'stopInstance').map((e) => e.at);
      for (const start of p.filter((e) => e.kind === 'startInstance')) expect(stops.some((at) => at < start.at)).toBe(true);
      return [v.length, p.length, p.some((e) => e.kind === 'startInstance' && e.disableFirst)] as const;
    });
    expect(drawn.some(([v]) => v > 0)).toBe(true);
    expect(drawn.some(([v]) => v === 0)).toBe(true);
    expect(drawn.some(([, p]) => p > 0)).toBe(true);
    expect(drawn.some(([, p]) => p === 0)).toBe(true);
    // Some starts come after their node was disabled: the start re-homes the instance.
    expect(drawn.some(([, , rehome]) => rehome)).toBe(true);
  });
});
