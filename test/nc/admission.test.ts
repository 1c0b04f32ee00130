import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decideRun, type AdmissionInput } from '../../nc/admission.js';
import { observe } from '../../nc/instanceView.js';
import type { NcSnapshot } from '../../nc/ncStore.js';
import { usedResources } from '../../nc/usage.js';
import { add, fits } from '../../shared/model/resources.js';
import { domain, HOST, LARGE, record, runRequest, snapshot, SMALL } from './fixtures.js';

const CAP = { cores: 4, memoryMiB: 1024, diskGiB: 40 };
const ID = 'i-0000000a';

function input(over: Partial<AdmissionInput> = {}): AdmissionInput {
  return {
    host: HOST, snapshot: snapshot([]), request: runRequest(ID), capacity: CAP,
    healthy: true, observation: observe([], 0), now: 7, ...over,
  };
}

describe('admission (decideRun)', () => {
  const full = snapshot([1, 2, 3, 4].map((n) => record(`i-0000000${n}`, 'running')));
  const cases: [string, Partial<AdmissionInput>, string][] = [
    ['an empty enabled node takes it', {}, 'create'],
    ['a disabled node refuses', { snapshot: snapshot([], 'disabled') }, 'NodeDisabled'],
    ['an unhealthy hypervisor refuses', { healthy: false }, 'HypervisorUnavailable'],
    ['a never-reached hypervisor refuses', { capacity: undefined }, 'HypervisorUnavailable'],
    ['a full node refuses', { snapshot: full }, 'InsufficientCapacity'],
    ['pending instances count', { snapshot: snapshot([1, 2, 3, 4].map((n) => record(`i-0000000${n}`, 'pending'))) }, 'InsufficientCapacity'],
    ['shutting-down instances count', { snapshot: snapshot([1, 2, 3, 4].map((n) => record(`i-0000000${n}`, 'shutting-down'))) }, 'InsufficientCapacity'],
    ['terminated instances do not count', { snapshot: snapshot([1, 2, 3, 4].map((n) => record(`i-0000000${n}`, 'terminated'))) }, 'create'],
    ['orphan domains count', { observation: observe([1, 2, 3, 4].map((n) => domain(`i-0000001${n}`)), 0) }, 'InsufficientCapacity'],
    ['an orphan with the same id is not counted twice', {
      snapshot: snapshot([1, 2, 3].map((n) => record(`i-0000000${n}`, 'running'))), observation: observe([domain(ID)], 0),
    }, 'create'],
    ['memory is a dimension too', { request: runRequest(ID, { vmType: { ...LARGE, memoryMiB: 2048 } }) }, 'InsufficientCapacity'],
    ['the same spec is answered even when disabled', { snapshot: snapshot([record(ID, 'running')], 'disabled') }, 'existing'],
    ['the same spec is answered even when full', { snapshot: snapshot([record(ID, 'running'), ...[1, 2, 3].map((n) => record(`i-0000000${n}`, 'running'))]) }, 'existing'],
    ['a terminated same spec answers with the tombstone', { snapshot: snapshot([record(ID, 'terminated')]) }, 'existing'],
    ['a different spec is InstanceExists', { snapshot: snapshot([record(ID, 'running', { imageId: 'emi-00000002' })]) }, 'InstanceExists'],
    ['a different vm type is InstanceExists', { snapshot: snapshot([record(ID, 'running', { vmType: LARGE })]) }, 'InstanceExists'],
    ['a pending same spec is carried on', { snapshot: snapshot([record(ID, 'pending')]) }, 'create'],
    ['a restart replaces a tombstone of the id', { snapshot: snapshot([record(ID, 'terminated')]), request: runRequest(ID, { restart: true }) }, 'create'],
    ['a restart of a running id is answered with it', { snapshot: snapshot([record(ID, 'running')]), request: runRequest(ID, { restart: true }) }, 'existing'],
    ['a restart on a disabled node is refused', { snapshot: snapshot([record(ID, 'terminated')], 'disabled'), request: runRequest(ID, { restart: true }) }, 'NodeDisabled'],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    const d = decideRun(input(over));
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  it('persists a fresh pending record only for new instances', () => {
    const fresh = decideRun(input());
    expect(fresh).toMatchObject({ kind: 'create', fresh: true, record: { instanceId: ID, phase: 'pending', since: 7, migrationState: 'none' } });
    const again = decideRun(input({ snapshot: snapshot([record(ID, 'pending')]) }));
    expect(again).toMatchObject({ kind: 'create', fresh: false });
  });

  it('names what was needed and what was free', () => {
    const d = decideRun(input({ snapshot: snapshot([1, 2, 3, 4].map((n) => record(`i-0000000${n}`, 'running'))) }));
    expect(d).toMatchObject({ kind: 'refuse', fields: { host: HOST, vmType: 'm1.small', free: '0 cores/0 MiB/20 GiB' } });
  });

  it('admits exactly when the request fits beside every non-terminated instance (property)', () => {
    const phase = fc.constantFrom('pending', 'running', 'shutting-down', 'terminated' as const);
    const type = fc.record({ cores: fc.integer({ min: 1, max: 3 }), memoryMiB: fc.integer({ min: 1, max: 600 }), diskGiB: fc.integer({ min: 1, max: 20 }) });
    fc.assert(fc.property(fc.array(fc.tuple(phase, type), { maxLength: 8 }), type, (held, want) => {
      const snap: NcSnapshot = snapshot(held.map(([p, t], i) => record(`i-000000${(16 + i).toString(16)}`, p, { vmType: { ...SMALL, ...t } })));
      const d = decideRun(input({ snapshot: snap, request: runRequest(ID, { vmType: { ...SMALL, ...want } }) }));
      const after = add(usedResources(snap.instances, undefined), want);
      expect(d.kind === 'create').toBe(fits(after, CAP));
      if (d.kind !== 'create') expect(d).toMatchObject({ kind: 'refuse', code: 'InsufficientCapacity' });
    }));
  });
});
