import { describe, expect, it } from 'vitest';
import { observe } from '../../nc/instanceView.js';
import { decideStart, type StartInput } from '../../nc/startDecision.js';
import type { DomainState } from '../../nc/hypervisor/driver.js';
import { domain, HOST, LARGE, record, snapshot } from './fixtures.js';

const CAP = { cores: 4, memoryMiB: 1024, diskGiB: 40 };
const ID = 'i-0000000a';

const off = (state: DomainState = 'shutoff') => observe([domain(ID, state)], 0);

function input(over: Partial<StartInput> = {}): StartInput {
  return { host: HOST, snapshot: snapshot([record(ID, 'running')]), instanceId: ID, capacity: CAP, healthy: true, observation: off(), ...over };
}

describe('decideStart (ncStartInstance)', () => {
  const three = [1, 2, 3].map((n) => record(`i-0000000${n}`, 'running'));
  const cases: [string, Partial<StartInput>, string][] = [
    ['a shut-off instance of its own is started', {}, 'start'],
    ['a crashed one too', { observation: off('crashed') }, 'start'],
    ['a running one is answered as is', { observation: off('running') }, 'running'],
    ['a paused one is answered as is', { observation: off('paused') }, 'running'],
    ['a running one is answered as is even on a disabled node', { snapshot: snapshot([record(ID, 'running')], 'disabled'), observation: off('running') }, 'running'],
    ['an unknown id is InstanceNotFound', { snapshot: snapshot([]) }, 'InstanceNotFound'],
    ['a tombstone is not started', { snapshot: snapshot([record(ID, 'terminated')]) }, 'InstanceNotStartable'],
    ['a shutting-down one is not started', { snapshot: snapshot([record(ID, 'shutting-down')]) }, 'InstanceNotStartable'],
    ['an unconfirmed launch is not started', { snapshot: snapshot([record(ID, 'pending')]) }, 'InstanceNotStartable'],
    ['one whose domain is gone is not started (no disk to start from)', { observation: observe([], 0) }, 'InstanceNotStartable'],
    ['a source in a migration is refused', { snapshot: snapshot([record(ID, 'running', { migrationState: 'ready', migrationId: 'mig-00000001' })]) }, 'InstanceMigrating'],
    ['a disabled node starts nothing (a fenced host is held disabled)', { snapshot: snapshot([record(ID, 'running')], 'disabled') }, 'NodeDisabled'],
    ['an unhealthy hypervisor refuses', { healthy: false }, 'HypervisorUnavailable'],
    ['a never-reached hypervisor refuses', { capacity: undefined, observation: undefined }, 'HypervisorUnavailable'],
    ['its own resources are not counted against it', { snapshot: snapshot([record(ID, 'running'), ...three]) }, 'start'],
    ['a host that came back smaller refuses', { snapshot: snapshot([record(ID, 'running'), ...three]), capacity: { ...CAP, memoryMiB: 768 } }, 'InsufficientCapacity'],
    ['a larger type that no longer fits refuses', { snapshot: snapshot([record(ID, 'running', { vmType: LARGE }), ...three]) }, 'InsufficientCapacity'],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    const d = decideStart(input(over));
    expect(d.kind === 'refuse' ? d.code : d.kind).toBe(expected);
  });

  it('says why an instance cannot start, and names the migration state of a moving one', () => {
    expect(decideStart(input({ observation: observe([], 0) }))).toMatchObject({ fields: { host: HOST, instanceId: ID, detail: 'its domain is missing in the hypervisor' } });
    const src = decideStart(input({ snapshot: snapshot([record(ID, 'running', { migrationState: 'migrating', migrationId: 'mig-00000001' })]) }));
    expect(src).toMatchObject({ kind: 'refuse', fields: { migrationState: 'migrating' } });
    expect(src.kind === 'refuse' ? src.message : '').toMatch(/start it once the migration has ended/);
  });
});
