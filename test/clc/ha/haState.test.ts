/** Host HA in clc.json (clc/ha/haState.ts, clc/state/clcStore.ts): plain JSON round trips, old files, bad records. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { step } from '../../../clc/ha/hostHaMachine.js';
import { appendHaEvents, emptyHaSection, haSectionSchema, HA_EVENT_LOG_LIMIT, type HaLogEvent } from '../../../clc/ha/haState.js';
import { HA_STATES } from '../../../clc/ha/hostHaState.js';
import { CLC_STORE_FILE, openClcStore } from '../../../clc/state/clcStore.js';
import { isFerryError } from '../../../shared/errors/registry.js';
import { ctx, inState } from './haFixtures.js';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-ha-store-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('host HA in clc.json', () => {
  it('a new store has an empty HA section', async () => {
    expect((await openClcStore(dir)).read().ha).toEqual(emptyHaSection());
  });

  it('round-trips records in every state, mid-operation, blocked and waiting for an operator, through a reopen', async () => {
    const s = await openClcStore(dir);
    const hosts = Object.fromEntries(HA_STATES.map((st, i) => [`127.0.1.${i + 1}`, { ...inState(st), host: `127.0.1.${i + 1}` }]));
    hosts['127.0.1.50'] = { ...inState('CHECKING', { operation: null, blocked: { target: 'RECOVERING', reason: 'storm protection: 3 of 4', since: 7 } }), host: '127.0.1.50' };
    hosts['127.0.1.51'] = { ...inState('FENCING', { operation: null, needsOperator: true }), host: '127.0.1.51' };
    const fenced = step(inState('FENCING'), { type: 'fenceResult', token: 7, ok: true, detail: 'Already OFF' }, 9, ctx()).next;
    hosts['127.0.1.52'] = { ...fenced, host: '127.0.1.52' };
    const events: HaLogEvent[] = [{ id: 1, at: 9, host: '127.0.1.52', kind: 'transition', level: 'info', from: 'FENCING', to: 'FENCED', message: 'power off confirmed' }];
    await s.update((d) => {
      d.ha.hosts = hosts;
      d.ha.partitions.p1 = { enabled: true, maxUnhealthy: '40%', settings: { fenceTimeoutMs: 5000 } };
      d.ha.global = { settings: { recoverFailureThreshold: 2 }, maxUnhealthy: '2' };
      d.ha.hostDisabled = ['127.0.1.9'];
      d.ha.events = events;
      d.ha.nextEventId = 2;
    });
    const raw = JSON.parse(await readFile(join(dir, CLC_STORE_FILE), 'utf8'));
    expect(raw).toMatchObject({ kind: 'ferry-clc', schemaVersion: 1, data: { ha: { partitions: { p1: { enabled: true } } } } });
    const again = (await openClcStore(dir)).read().ha;
    expect(again.hosts).toEqual(hosts);
    expect(again.partitions.p1).toEqual({ enabled: true, maxUnhealthy: '40%', settings: { fenceTimeoutMs: 5000 } });
    expect(again.global).toEqual({ settings: { recoverFailureThreshold: 2 }, maxUnhealthy: '2' });
    expect(again.events).toEqual(events);
  });

  it('loads a clc.json written before host HA, with an empty section', async () => {
    await writeFile(join(dir, CLC_STORE_FILE), JSON.stringify({
      schemaVersion: 1, kind: 'ferry-clc', data: { vmTypes: [{ name: 't1.micro', cores: 1, memoryMiB: 256, diskGiB: 5 }], instances: {} },
    }));
    expect((await openClcStore(dir)).read().ha).toEqual(emptyHaSection());
  });

  it('loads records written before owed repairs: a FENCED host owes its restart elsewhere (as it was re-run at every start), others nothing', async () => {
    const s = await openClcStore(dir);
    await s.update((d) => {
      d.ha.hosts['127.0.1.1'] = { ...inState('FENCED', { since: 5 }), host: '127.0.1.1' };
      d.ha.hosts['127.0.1.2'] = { ...inState('AVAILABLE'), host: '127.0.1.2' };
    });
    const raw = JSON.parse(await readFile(join(dir, CLC_STORE_FILE), 'utf8')) as { data: { ha: { hosts: Record<string, Record<string, unknown>> } } };
    for (const r of Object.values(raw.data.ha.hosts)) delete r.owed;
    await writeFile(join(dir, CLC_STORE_FILE), JSON.stringify(raw));
    const hosts = (await openClcStore(dir)).read().ha.hosts;
    expect(hosts['127.0.1.1']?.owed).toEqual({ kind: 'evacuate', since: 5, attempts: 0, nextAttemptAt: 5, inFlight: null, lastOutcome: null });
    expect(hosts['127.0.1.2']?.owed).toBeNull();
  });

  it('refuses a store whose HA record is not valid, with a coded error (never a silent reset)', async () => {
    const s = await openClcStore(dir);
    const bad = { ...inState('SUSPECT'), state: 'ASLEEP' };
    await s.update((d) => { (d.ha.hosts as Record<string, unknown>)['127.0.1.1'] = bad; });
    await expect(openClcStore(dir)).rejects.toSatisfy((e: unknown) => isFerryError(e) && e.code === 'StoreInvalid');
  });
});

describe('appendHaEvents', () => {
  it('keeps the last entries up to the limit', () => {
    const ha = { events: [] as HaLogEvent[], nextEventId: 1 };
    const log = ha.events;
    const ev = (at: number): HaLogEvent => ({ at, host: 'h', kind: 'alert', level: 'info', message: String(at) });
    appendHaEvents(ha, Array.from({ length: HA_EVENT_LOG_LIMIT - 1 }, (_, i) => ev(i)));
    appendHaEvents(ha, [ev(5000), ev(5001), ev(5002)]);
    expect(log).toHaveLength(HA_EVENT_LOG_LIMIT);
    expect(log[0]?.at).toBe(2);
    expect(log.at(-1)?.at).toBe(5002);
    // Durable ids, increasing, never reused after the oldest are dropped.
    expect(log[0]?.id).toBe(3);
    expect(log.at(-1)?.id).toBe(HA_EVENT_LOG_LIMIT + 2);
    expect(ha.nextEventId).toBe(HA_EVENT_LOG_LIMIT + 3);
  });

  it('numbers the events of an older store in log order on load, after any id already given', () => {
    const old = { ...emptyHaSection(), events: [{ at: 1, host: 'h', kind: 'alert', level: 'info', message: 'a' }, { at: 2, host: 'h', kind: 'alert', level: 'info', message: 'b' }] };
    const { nextEventId: _n, ...withoutNext } = old;
    const loaded = haSectionSchema.parse(withoutNext);
    expect(loaded.events.map((e) => e.id)).toEqual([1, 2]);
    expect(loaded.nextEventId).toBe(3);
  });
});
