/** decidePause / settlePauses (issue 18 part 6): table-driven, pure. */
import { describe, expect, it } from 'vitest';
import type { DomainState } from '../../nc/hypervisor/driver.js';
import { observe } from '../../nc/instanceView.js';
import { decidePause, settlePauses, type PauseInput } from '../../nc/pauseDecision.js';
import { domain, HOST, record, snapshot } from './fixtures.js';

const ID = 'i-0000000a';
const seen = (state: DomainState) => observe([domain(ID, state)], 0);

function input(over: Partial<PauseInput> = {}): PauseInput {
  return { host: HOST, snapshot: snapshot([record(ID, 'running')]), instanceId: ID, paused: true, healthy: true, observation: seen('running'), ...over };
}

const paused = snapshot([record(ID, 'running', { paused: true })]);

describe('decidePause (ncPauseInstance)', () => {
  const cases: [string, Partial<PauseInput>, string][] = [
    ['pause of a running instance: persist, then suspend', {}, 'change persist act'],
    ['pause of a paused one is answered as is', { snapshot: paused, observation: seen('suspended') }, 'answer'],
    ['pause after a crash between write and suspend: suspend only', { snapshot: paused }, 'change act'],
    ['pause of a suspended domain the record does not know: persist only', { observation: seen('suspended') }, 'change persist'],
    ['resume of a paused one: persist, then resume', { paused: false, snapshot: paused, observation: seen('suspended') }, 'change persist act'],
    ['resume of a running one is answered as is', { paused: false }, 'answer'],
    ['resume whose record was already written: resume only', { paused: false, observation: seen('suspended') }, 'change act'],
    ['resume of a paused record whose domain runs: persist only', { paused: false, snapshot: paused }, 'change persist'],
    ['a disabled (maintenance) node pauses', { snapshot: snapshot([record(ID, 'running')], 'disabled') }, 'change persist act'],
    ['an unknown id is InstanceNotFound', { snapshot: snapshot([]) }, 'InstanceNotFound'],
    ['a tombstone is not pausable', { snapshot: snapshot([record(ID, 'terminated')]) }, 'InstanceNotPausable'],
    ['a shutting-down one is not pausable', { snapshot: snapshot([record(ID, 'shutting-down')]) }, 'InstanceNotPausable'],
    ['an unconfirmed launch is not pausable', { snapshot: snapshot([record(ID, 'pending')]) }, 'InstanceNotPausable'],
    ['a shut-off domain is not pausable', { observation: seen('shutoff') }, 'InstanceNotPausable'],
    ['a crashed domain is not resumable', { paused: false, snapshot: paused, observation: seen('crashed') }, 'InstanceNotPausable'],
    ['a missing domain is not pausable', { observation: observe([], 0) }, 'InstanceNotPausable'],
    ['a domain in a migration\'s own pause is not pausable', { observation: seen('paused') }, 'InstanceNotPausable'],
    ['a source in a migration is refused', { snapshot: snapshot([record(ID, 'running', { migrationState: 'migrating', migrationId: 'mig-00000001' })]) }, 'InstanceMigrating'],
    ['an unhealthy hypervisor refuses', { healthy: false }, 'HypervisorUnavailable'],
    ['a never-seen hypervisor refuses', { observation: undefined }, 'InstanceNotPausable'],
  ];
  it.each(cases)('%s', (_name, over, expected) => {
    const d = decidePause(input(over));
    const got = d.kind === 'refuse' ? d.code : d.kind === 'change' ? ['change', d.persist ? 'persist' : '', d.act ? 'act' : ''].filter(Boolean).join(' ') : d.kind;
    expect(got).toBe(expected);
  });

  it('an incoming instance (destination side) is refused as migrating, with a message for pause', () => {
    const s = snapshot([]);
    s.incoming[ID] = { instanceId: ID } as (typeof s.incoming)[string];
    const d = decidePause(input({ snapshot: s }));
    expect(d).toMatchObject({ kind: 'refuse', code: 'InstanceMigrating', fields: { migrationState: 'incoming' } });
    expect(d.kind === 'refuse' ? d.message : '').toMatch(/can be paused once the migration has ended/);
  });

  it('says what it could not do and why', () => {
    expect(decidePause(input({ paused: false, snapshot: paused, observation: seen('shutoff') })))
      .toMatchObject({ fields: { host: HOST, instanceId: ID, action: 'resumed', detail: 'its domain is shutoff in the hypervisor' } });
  });
});

describe('settlePauses (start and reconnect)', () => {
  it('freezing wins: a suspended domain marks its record paused, a paused record suspends its running domain', () => {
    const recs = {
      'i-00000001': record('i-00000001', 'running'),
      'i-00000002': record('i-00000002', 'running', { paused: true }),
      'i-00000003': record('i-00000003', 'running', { paused: true }),
      'i-00000004': record('i-00000004', 'running'),
      // In a migration: left to it.
      'i-00000005': record('i-00000005', 'running', { migrationState: 'migrating', migrationId: 'mig-00000001' }),
      'i-00000006': record('i-00000006', 'terminated', { paused: true }),
    };
    const domains = [
      domain('i-00000001', 'suspended'), domain('i-00000002', 'running'), domain('i-00000003', 'suspended'),
      domain('i-00000004', 'running'), domain('i-00000005', 'suspended'),
    ];
    expect(settlePauses(recs, domains)).toEqual({ markPaused: ['i-00000001'], suspend: ['i-00000002'] });
  });

  it('a shut-off domain of a paused record is left as is (a start freezes it again)', () => {
    expect(settlePauses({ [ID]: record(ID, 'running', { paused: true }) }, [domain(ID, 'shutoff')])).toEqual({ markPaused: [], suspend: [] });
  });
});
