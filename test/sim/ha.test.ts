/** Host HA in the simulator: invariants 4 and 5 over hand-made truths, the simulated BMC, shared storage. */
import { describe, expect, it } from 'vitest';
import { newHostHaRecord, type HaState, type HostHaRecord } from '../../clc/ha/hostHaState.js';
import { emptyHaSection } from '../../clc/ha/haState.js';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import { checkActivity } from '../../nc/ha/activityCheck.js';
import { MemoryDiskIo } from '../../nc/hypervisor/sim/diskIo.js';
import { ManualClock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { checkHaStep, checkRestart, type HaSectionTruth } from '../../sim/haInvariants.js';
import { Prng } from '../../sim/prng.js';
import { memorySharedStorage } from '../../sim/sharedStorage.js';
import { SimBmc, type BmcMode } from '../../sim/simBmc.js';
import type { HostTruth } from '../../sim/truth.js';

const P = 'sim01';
const [H1, H2, H3, H4] = ['127.0.50.1', '127.0.50.2', '127.0.50.3', '127.0.50.4'] as const;

function dom(id: string, state: DomainInfo['state'] = 'running'): DomainInfo {
  return { id, state, resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1', diskPath: `/x/${id}`, startedAt: 0 };
}

const host = (name: string, domains: DomainInfo[] = []): HostTruth => ({ host: name, poweredOn: true, domains, nc: undefined });

function rec(h: string, state: HaState, reason = 'test'): HostHaRecord {
  return { ...newHostHaRecord(h, P, 0), state, reason };
}

function section(records: HostHaRecord[], maxUnhealthy?: string): HaSectionTruth {
  const s = emptyHaSection();
  s.partitions[P] = { enabled: true, settings: {}, ...(maxUnhealthy ? { maxUnhealthy } : {}) };
  for (const r of records) s.hosts[r.host] = r;
  return s;
}

const kinds = (vs: { invariant: string }[]): string[] => vs.map((v) => v.invariant);

describe('invariant 4: fence before restart, a fenced host runs nothing', () => {
  it.each([
    ['FENCED and off: allowed', 'FENCED', [], []],
    ['FENCING: restart before fence', 'FENCING', [], ['4 restart before fence']],
    ['SUSPECT: restart before fence', 'SUSPECT', [], ['4 restart before fence']],
    ['FENCED but the instance runs there', 'FENCED', [dom('i-0000000a')], ['4 restart while running']],
    ['FENCED, a shut-off copy there: allowed', 'FENCED', [dom('i-0000000a', 'shutoff')], []],
  ] as const)('%s', (_name, state, domains, expected) => {
    const ha = section([rec(H1, state)]);
    expect(kinds(checkRestart(ha, [host(H1, [...domains]), host(H2)], [H1], ['i-0000000a']))).toEqual(expected);
  });

  it('flags a FENCED host that runs a domain, every step', () => {
    const ha = section([rec(H1, 'FENCED'), rec(H2, 'AVAILABLE')]);
    expect(kinds(checkHaStep(ha, [host(H1, [dom('i-0000000b')]), host(H2, [dom('i-0000000c')])], new Map()))).toEqual(['4 fenced host runs']);
    expect(checkHaStep(ha, [host(H1, [dom('i-0000000b', 'shutoff')]), host(H2)], new Map())).toEqual([]);
  });
});

describe('invariant 5: the storm bound', () => {
  const truth = [H1, H2, H3, H4].map((h) => host(h));

  it('fires when HA starts more remediations than maxUnhealthy allows, at the step one starts', () => {
    const prev = new Map<string, HaState>([[H1, 'RECOVERING'], [H2, 'CHECKING']]);
    const ha = section([rec(H1, 'RECOVERING'), rec(H2, 'FENCING'), rec(H3, 'AVAILABLE'), rec(H4, 'AVAILABLE')], '1');
    expect(kinds(checkHaStep(ha, truth, prev))).toEqual(['5 storm bound']);
    // Remembered: the same states at the next step start nothing new.
    expect(checkHaStep(ha, truth, prev)).toEqual([]);
  });

  it('holds within the bound (a percentage of the watched hosts), and does not count an operator\'s FenceHost', () => {
    const within = section([rec(H1, 'RECOVERING'), rec(H2, 'FENCING'), rec(H3, 'AVAILABLE'), rec(H4, 'AVAILABLE')], '50%');
    expect(checkHaStep(within, truth, new Map())).toEqual([]);
    const operator = section([rec(H1, 'RECOVERING'), rec(H2, 'FENCING', 'FenceHost by admin'), rec(H3, 'AVAILABLE'), rec(H4, 'AVAILABLE')], '1');
    expect(checkHaStep(operator, truth, new Map())).toEqual([]);
    // Hosts HA does not watch do not count: 1 of 2 watched is within 50%, 2 of 2 is not.
    const few = section([rec(H1, 'RECOVERING'), rec(H2, 'RECOVERING'), rec(H3, 'INELIGIBLE'), rec(H4, 'DISABLED')], '50%');
    expect(kinds(checkHaStep(few, truth, new Map()))).toEqual(['5 storm bound']);
  });
});

describe('SimBmc', () => {
  function rig(mode: BmcMode): { bmc: SimBmc; on: Set<string>; lies: string[]; clock: ManualClock } {
    const clock = new ManualClock(0);
    const on = new Set<string>([H1]);
    const lies: string[] = [];
    const chassis = { isOn: (h: string) => on.has(h), powerOff: (h: string) => { on.delete(h); }, powerOn: async (h: string) => { on.add(h); } };
    return { bmc: new SimBmc(H1, chassis, clock, new Prng(1), () => mode, (h, what) => lies.push(`${h} ${what}`)), on, lies, clock };
  }

  async function settle(p: Promise<unknown>, clock: ManualClock): Promise<string> {
    let out = 'pending';
    p.then((v) => { out = `ok ${JSON.stringify(v)}`; }, (e: unknown) => { out = isFerryError(e) ? e.code : String(e); });
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setImmediate(r));
      clock.advance(100);
    }
    return out;
  }

  it.each([
    ['ok', 'ok {"alreadyOff":false}', false, 0],
    ['slow', 'ok {"alreadyOff":false}', false, 0],
    ['liesOff', 'ok {"alreadyOff":false}', true, 1],
    ['liesFailed', 'FenceAgentFailed', false, 1],
    ['dead', 'pending', true, 0],
  ] as const)('off() with a %s BMC answers %s', async (mode, answer, stillOn, lies) => {
    const r = rig(mode);
    expect(await settle(r.bmc.off(), r.clock)).toBe(answer);
    expect(r.on.has(H1)).toBe(stillOn);
    expect(r.lies).toHaveLength(lies);
  });

  it('status tells the truth unless the BMC lies; reboot cycles the power', async () => {
    const r = rig('ok');
    expect(await settle(r.bmc.status(), r.clock)).toBe('ok "on"');
    expect(await settle(r.bmc.reboot(), r.clock)).toBe('ok undefined');
    expect(r.on.has(H1)).toBe(true);
    const liar = rig('liesOff');
    expect(await settle(liar.bmc.status(), liar.clock)).toBe('ok "off"');
    expect(liar.on.has(H1)).toBe(true);
  });
});

describe('simulated shared storage', () => {
  it('shows a host\'s heartbeat and disk files to the real activity check, and nothing of other hosts', async () => {
    const clock = new ManualClock(1000);
    const disk = new MemoryDiskIo(clock);
    const view = memorySharedStorage(disk, '/shared');
    expect((await checkActivity(view, H1, 0)).outcome).toBe('unknown');
    await disk.write(`/shared/${H1}/heartbeat`, 'x');
    await disk.write(`/shared/${H2}/i-0000000a.disk`, 'x');
    clock.advance(5000);
    expect((await checkActivity(view, H1, 500)).outcome).toBe('active');
    expect((await checkActivity(view, H1, 2000)).outcome).toBe('inactive');
    expect((await view.hostEntries(H2))?.map((e) => e.name)).toEqual(['i-0000000a.disk']);
  });
});
