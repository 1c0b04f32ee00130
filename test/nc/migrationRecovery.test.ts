import { describe, expect, it } from 'vitest';
import { observe } from '../../nc/instanceView.js';
import { planMigrationWork, type RecoveryTrigger } from '../../nc/migrationRecovery.js';
import type { InstanceRecord, NcSnapshot, StoredIncoming, StoredPlan } from '../../nc/ncStore.js';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import type { MigrationState } from '../../shared/protocol/common.js';
import type { ItemState } from '../../shared/protocol/migrationProtocol.js';
import { domain, record, snapshot } from './fixtures.js';
import { A, hv, item, MIG, plan, prepareDest } from './migrationFixtures.js';

function source(itemState: ItemState | null, migrationState: MigrationState, abort = false): NcSnapshot {
  const rec: InstanceRecord = record(A, 'running', { migrationState, ...(migrationState === 'none' ? {} : { migrationId: MIG }) });
  const s = snapshot([rec]);
  if (itemState) {
    const p: StoredPlan = { ...plan([item(A, { state: itemState })]), receivedAt: 0 };
    if (abort && p.items[0]) p.items[0].abort = { reason: 'r', cancel: false };
    s.plans[MIG] = p;
  }
  return s;
}

function destination(state: MigrationState, rollingBack = false): NcSnapshot {
  const r = prepareDest(A);
  if (r.action !== 'prepare' || r.role !== 'destination') throw new Error('fixture');
  const inc: StoredIncoming = { ...r.incoming, state, since: 0, ...(rollingBack ? { rollingBack } : {}) };
  return { ...snapshot([]), incoming: { [A]: inc } };
}

describe('migration recovery (planMigrationWork)', () => {
  // [name, persisted, hypervisor domain here (null: none, undefined: not observed), live job?, trigger, work kinds]
  const cases: [string, NcSnapshot, DomainInfo | null | undefined, boolean, RecoveryTrigger, string[]][] = [
    ['source migrating without a live call: join', source('migrating', 'migrating'), domain(A), false, 'start', ['join']],
    ['source migrating with a live call: nothing', source('migrating', 'migrating'), domain(A), true, 'poll', []],
    ['source migrating, even unobserved: join', source('migrating', 'migrating'), undefined, false, 'start', ['join']],
    ['source migrating with an abort recorded: join (the runner aborts)', source('migrating', 'migrating', true), domain(A), false, 'start', ['join']],
    ['source cleaning: finish it', source('cleaning', 'cleaning'), null, false, 'start', ['finish-cleaning']],
    ['source queued and ready: nothing to do', source('queued', 'ready'), domain(A), false, 'start', []],
    ['instance ready but its item ended: release', source('rolled-back', 'ready'), domain(A), false, 'poll', ['release']],
    ['instance migrating but its plan is gone: release', source(null, 'migrating'), domain(A), false, 'poll', ['release']],
    ['incoming preparing, nothing prepared: prepare again', destination('preparing'), null, false, 'start', ['prepare-incoming']],
    ['incoming preparing, prepared: prepare again (idempotent)', destination('preparing'), domain(A, 'paused'), false, 'poll', ['prepare-incoming']],
    ['incoming ready, domain paused: keep waiting', destination('ready'), domain(A, 'paused'), false, 'start', []],
    ['incoming ready, domain running: finalize', destination('ready'), domain(A, 'running'), false, 'poll', ['finalize']],
    ['incoming ready, domain stopped after a power cycle: finalize', destination('ready'), domain(A, 'shutoff'), false, 'start', ['finalize']],
    ['incoming ready, domain gone at start: prepare again', destination('ready'), null, false, 'start', ['prepare-incoming']],
    ['incoming ready, domain gone on a poll: wait for the CC', destination('ready'), null, false, 'poll', []],
    ['incoming, hypervisor never seen: nothing', destination('ready'), undefined, false, 'start', []],
    ['incoming rolling back: finish it', destination('ready', true), domain(A, 'paused'), false, 'poll', ['finish-rollback']],
    ['incoming rolling back but arrived: finalize', destination('ready', true), domain(A, 'running'), false, 'start', ['finalize']],
  ];
  it.each(cases)('%s', (_n, snap, dom, live, trigger, kinds) => {
    const observation = dom === undefined ? undefined : observe(dom ? [dom] : [], 0);
    const work = planMigrationWork({ snapshot: snap, observation, liveJobs: new Set(live ? [hv(A)] : []), trigger });
    expect(work.map((w) => w.kind)).toEqual(kinds);
  });
});
