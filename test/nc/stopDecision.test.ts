/** decideStop / decideReboot / settleStops and the user's start (issue 18 part 5): table-driven, pure. */
import { describe, expect, it } from 'vitest';
import type { DomainState } from '../../nc/hypervisor/driver.js';
import { observe } from '../../nc/instanceView.js';
import { decideStart, type StartInput } from '../../nc/startDecision.js';
import { decideReboot, decideStop, settleStops, type PowerInput } from '../../nc/stopDecision.js';
import { usedResources } from '../../nc/usage.js';
import { domain, HOST, record, snapshot } from './fixtures.js';

const ID = 'i-0000000a';
const seen = (state: DomainState) => observe([domain(ID, state)], 0);

function input(over: Partial<PowerInput> = {}): PowerInput {
  return { host: HOST, snapshot: snapshot([record(ID, 'running')]), instanceId: ID, healthy: true, observation: seen('running'), ...over };
}

const stopped = snapshot([record(ID, 'running', { userStopped: true })]);
const migrating = snapshot([record(ID, 'running', { migrationState: 'migrating', migrationId: 'mig-00000001' })]);

const outcome = (d: ReturnType<typeof decideStop> | ReturnType<typeof decideReboot>): string => {
  if (d.kind === 'refuse') return d.code;
  if (d.kind === 'change') return ['change', d.persist ? 'persist' : '', d.act ? 'act' : ''].filter(Boolean).join(' ');
  return d.kind;
};

describe('decideStop (ncStopInstance)', () => {
  const cases: [string, Partial<PowerInput>, string][] = [
    ['a running instance: persist, then shut down', {}, 'change persist act'],
    ['a stopped one is answered as is', { snapshot: stopped, observation: seen('shutoff') }, 'answer'],
    ['a crash between the write and the shutdown: shut down only', { snapshot: stopped }, 'change act'],
    ['a domain a power cycle shut off: persist only', { observation: seen('shutoff') }, 'change persist'],
    ['a crashed domain: persist only', { observation: seen('crashed') }, 'change persist'],
    ['a disabled (maintenance) node stops', { snapshot: snapshot([record(ID, 'running')], 'disabled') }, 'change persist act'],
    ['an unknown id is InstanceNotFound', { snapshot: snapshot([]) }, 'InstanceNotFound'],
    ['a tombstone is refused', { snapshot: snapshot([record(ID, 'terminated')]) }, 'InstanceStateConflict'],
    ['a shutting-down one is refused', { snapshot: snapshot([record(ID, 'shutting-down')]) }, 'InstanceStateConflict'],
    ['an unconfirmed launch is refused', { snapshot: snapshot([record(ID, 'pending')]) }, 'InstanceStateConflict'],
    ['a paused one is refused (unpause first)', { snapshot: snapshot([record(ID, 'running', { paused: true })]), observation: seen('suspended') }, 'InstanceStateConflict'],
    ['a missing domain is refused', { observation: observe([], 0) }, 'InstanceStateConflict'],
    ['a domain in a migration\'s own pause is refused', { observation: seen('paused') }, 'InstanceStateConflict'],
    ['a source in a migration is refused', { snapshot: migrating }, 'InstanceMigrating'],
    ['an unhealthy hypervisor refuses', { healthy: false }, 'HypervisorUnavailable'],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    expect(outcome(decideStop(input(over)))).toBe(expected);
  });

  it('says the state it found: running, or stopped', () => {
    expect(decideStop(input())).toMatchObject({ previousState: 'running' });
    expect(decideStop(input({ snapshot: stopped, observation: seen('shutoff') }))).toMatchObject({ previousState: 'stopped' });
  });

  it('an incoming instance (destination side) is refused as migrating', () => {
    const s = snapshot([]);
    s.incoming[ID] = { instanceId: ID } as (typeof s.incoming)[string];
    expect(decideStop(input({ snapshot: s }))).toMatchObject({ kind: 'refuse', code: 'InstanceMigrating', fields: { migrationState: 'incoming' } });
  });
});

describe('decideReboot (ncRebootInstance)', () => {
  const cases: [string, Partial<PowerInput>, string][] = [
    ['a running instance reboots', {}, 'reboot'],
    ['a disabled node reboots its own', { snapshot: snapshot([record(ID, 'running')], 'disabled') }, 'reboot'],
    ['a stopped one is refused', { snapshot: stopped, observation: seen('shutoff') }, 'InstanceStateConflict'],
    ['a user-stopped record whose domain still runs is refused', { snapshot: stopped }, 'InstanceStateConflict'],
    ['a shut-off domain is refused', { observation: seen('shutoff') }, 'InstanceStateConflict'],
    ['a paused one is refused', { snapshot: snapshot([record(ID, 'running', { paused: true })]), observation: seen('suspended') }, 'InstanceStateConflict'],
    ['an unknown id', { snapshot: snapshot([]) }, 'InstanceNotFound'],
    ['a tombstone', { snapshot: snapshot([record(ID, 'terminated')]) }, 'InstanceStateConflict'],
    ['a source in a migration', { snapshot: migrating }, 'InstanceMigrating'],
    ['an unhealthy hypervisor', { healthy: false }, 'HypervisorUnavailable'],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    expect(outcome(decideReboot(input(over)))).toBe(expected);
  });
});

describe('decideStart of a user-stopped instance', () => {
  const base = (over: Partial<StartInput> = {}): StartInput => ({
    host: HOST, snapshot: stopped, instanceId: ID, capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, healthy: true, observation: seen('shutoff'), ...over,
  });
  it('its user starts it, clearing the mark first', () => {
    expect(decideStart(base({ userStart: true }))).toMatchObject({ kind: 'start', clearStopped: true });
  });
  it('host HA does not (only its user starts what its user stopped)', () => {
    expect(decideStart(base())).toMatchObject({ kind: 'refuse', code: 'InstanceNotStartable' });
  });
  it('a disabled node refuses the user too (the CC then re-homes it)', () => {
    expect(decideStart(base({ userStart: true, snapshot: snapshot([record(ID, 'running', { userStopped: true })], 'disabled') }))).toMatchObject({ kind: 'refuse', code: 'NodeDisabled' });
  });
  it('a stop that never reached its running domain: the mark goes, nothing else', () => {
    expect(decideStart(base({ userStart: true, observation: seen('running') }))).toMatchObject({ kind: 'start', clearStopped: true });
  });
  it('a power-cycled (not user-stopped) instance starts as before, mark or not', () => {
    expect(decideStart(base({ snapshot: snapshot([record(ID, 'running')]) }))).toMatchObject({ kind: 'start', clearStopped: false });
    expect(decideStart(base({ snapshot: snapshot([record(ID, 'running')]), userStart: true }))).toMatchObject({ kind: 'start', clearStopped: false });
  });
});

describe('capacity and settling', () => {
  it('a user-stopped instance holds nothing; one a power cycle stopped keeps its share', () => {
    const r = record(ID, 'running');
    expect(usedResources({ [ID]: { ...r, userStopped: true } }, seen('shutoff'))).toEqual({ cores: 0, memoryMiB: 0, diskGiB: 0 });
    expect(usedResources({ [ID]: r }, seen('shutoff'))).toEqual({ cores: r.vmType.cores, memoryMiB: r.vmType.memoryMiB, diskGiB: r.vmType.diskGiB });
  });

  it('settleStops powers off the running domains of user-stopped records, and no other', () => {
    const other = 'i-0000000b';
    const instances = {
      [ID]: record(ID, 'running', { userStopped: true }),
      [other]: record(other, 'running'),
    };
    expect(settleStops(instances, [domain(ID, 'running'), domain(other, 'running')])).toEqual([ID]);
    expect(settleStops(instances, [domain(ID, 'shutoff'), domain(other, 'shutoff')])).toEqual([]);
  });
});
