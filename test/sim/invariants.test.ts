/** The invariant checks themselves, table-driven over hand-made truths: each must fire when broken. */
import { describe, expect, it } from 'vitest';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import { NC_STORE_OPTIONS, type NcSnapshot } from '../../nc/ncStore.js';
import { checkSettled, checkStep } from '../../sim/invariants.js';
import { Ledger } from '../../sim/ledger.js';
import type { HostTruth } from '../../sim/truth.js';

const CAP = { cores: 2, memoryMiB: 512, diskGiB: 10 };
const SMALL = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };
const A = 'i-0000000a';

function dom(id: string, state: DomainInfo['state'] = 'running'): DomainInfo {
  return { id, state, resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1', diskPath: `/x/${id}`, startedAt: 0 };
}

function nc(over: Partial<NcSnapshot> = {}, ids: string[] = []): NcSnapshot {
  const s = NC_STORE_OPTIONS.initial();
  for (const id of ids) {
    s.instances[id] = {
      instanceId: id, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', vmType: SMALL, launchTime: 0, phase: 'running', since: 0, migrationState: 'none',
    };
  }
  return { ...s, ...over };
}

function host(name: string, domains: DomainInfo[], snap?: NcSnapshot): HostTruth {
  return { host: name, poweredOn: true, domains, nc: snap };
}

function ledgerWith(ids: string[]): Ledger {
  const l = new Ledger();
  l.acknowledgeRun(ids);
  return l;
}

const kinds = (vs: { invariant: string }[]): string[] => vs.map((v) => v.invariant);

describe('checkStep', () => {
  it.each<[string, HostTruth[], Ledger, string[]]>([
    ['a healthy cloud', [host('h1', [dom(A)], nc({}, [A]))], ledgerWith([A]), []],
    ['an acknowledged instance on no host', [host('h1', [], nc())], ledgerWith([A]), ['1 lost']],
    ['an instance whose host died (Host HA is not simulated)', [host('h1', [], nc())], (() => { const l = ledgerWith([A]); l.lostWithHost.add(A); return l; })(), []],
    ['a terminated instance gone', [host('h1', [], nc())], (() => { const l = ledgerWith([A]); l.terminating.add(A); return l; })(), []],
    ['two running copies', [host('h1', [dom(A)]), host('h2', [dom(A)])], ledgerWith([A]), ['2 twice']],
    ['a running copy and the paused incoming one', [host('h1', [dom(A)]), host('h2', [dom(A, 'paused')])], ledgerWith([A]), []],
    ['records beyond capacity', [host('h1', [], nc({}, [A, 'i-0000000b', 'i-0000000c']))], new Ledger(), ['3 capacity']],
  ])('%s', (_name, truth, ledger, expected) => {
    expect(kinds(checkStep(truth, ledger, CAP))).toEqual(expected);
  });

  it('fires when an acknowledged node state is not what the store holds, and not while a change is uncertain', () => {
    const l = new Ledger();
    l.modifySent('h1', 'disabled')();
    expect(kinds(checkStep([host('h1', [], nc({ nodeState: 'enabled' }))], l, CAP))).toEqual(['7 node state']);
    l.modifyDelivered('h1', 'enabled');
    expect(kinds(checkStep([host('h1', [], nc({ nodeState: 'enabled' }))], l, CAP))).toEqual([]);
    // An acknowledgement overtaken by an opposite request leaves the state uncertain.
    const ack = l.modifySent('h1', 'disabled');
    l.modifyDelivered('h1', 'disabled');
    l.modifyDelivered('h1', 'enabled');
    ack();
    expect(l.nodeState.get('h1')).toBeUndefined();
  });
});

describe('checkSettled', () => {
  it('passes a settled cloud and names every leftover', () => {
    expect(checkSettled([host('h1', [dom(A)], nc({}, [A]))], ledgerWith([A]), { instances: [{ instanceId: A, host: 'h1' }], reservedOn: [] })).toEqual([]);
    const incoming = nc({ incoming: { [A]: { migrationId: 'mig-00000001', instanceId: A, source: '127.0.0.9', reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'o', launchTime: 0, vmType: SMALL, state: 'ready', since: 0 } } });
    expect(kinds(checkSettled([host('h1', [dom(A)], nc({}, [A])), host('h2', [dom(A, 'paused')], incoming)], ledgerWith([A]))))
      .toEqual(['6 leftover', '6 leftover', '1 settled']);
    expect(kinds(checkSettled([host('h1', [dom(A)], nc())], new Ledger()))).toEqual(['6 orphan']);
    expect(kinds(checkSettled([host('h1', [dom(A)], nc({}, [A]))], ledgerWith([A]), { instances: [], reservedOn: ['h2'] }))).toEqual(['6 cc view', '6 reservation']);
    const t = ledgerWith([A]);
    t.terminating.add(A);
    t.terminated.add(A);
    expect(kinds(checkSettled([host('h1', [dom(A)], nc({}, [A]))], t))).toEqual(['1 terminated']);
  });
});
