/**
 * DescribeEvents through the admin API over fake CCs, a memory store and a manual clock: the admin's
 * DisableService, MigrateInstances and CancelMigration are recorded before their replies (actor =
 * the access key); the watcher's polls add each item's changes and the outcome; gate waits and host
 * HA's log appear; the filters, paging and the AfterSeq cursor select what they say; bad input gets
 * its code and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { EventWatcher } from '../../../clc/events/eventWatcher.js';
import { appendHaEvents } from '../../../clc/ha/haState.js';
import { silentLogger } from '../../../shared/log.js';
import { errorCode, eventually, harness, items, launchRunning, query, type Harness } from '../harness.js';

const [A, B] = ['127.0.12.11', '127.0.12.12'];
const KEY = 'AKIAEVENTSTEST000001';

async function events(h: Harness, params: Record<string, string> = {}): Promise<{ list: any[]; lastSeq: number; nextToken: string | undefined }> {
  const r = await query(h.app, { Action: 'DescribeEvents', ...params });
  expect(r.status, r.text).toBe(200);
  const body = r.doc.DescribeEventsResponse;
  return { list: items(body.eventSet), lastSeq: Number(body.lastSeq), nextToken: body.nextToken };
}

function watcher(h: Harness): EventWatcher {
  return new EventWatcher({ stream: h.events!, clusters: h.clusters, clock: h.clock, logger: silentLogger(), haLog: () => h.store.read().ha.events, pollMs: 1000 });
}

/** A drain of A by the admin: DisableService, MigrateInstances, then polls until the plan is final. */
async function drain(h: Harness): Promise<string> {
  await launchRunning(h, 'cluster01', 'm1.small', 2);
  const disabled = await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: A, AWSAccessKeyId: KEY });
  expect(disabled.status, disabled.text).toBe(200);
  const m = await query(h.app, { Action: 'MigrateInstances', SourceHost: A, AWSAccessKeyId: KEY });
  expect(m.status, m.text).toBe(200);
  const id = m.doc.MigrateInstancesResponse.migrationId as string;
  h.clusters.autoAdvance = true;
  const w = watcher(h);
  for (let i = 0; i < 20 && h.events!.select({ kinds: ['migration.completed'] }).length === 0; i++) await w.runRound();
  return id;
}

describe('DescribeEvents', () => {
  it('a drain: node.disabled and migration.planned by the admin\'s key, each item\'s changes, then migration.completed, in seq order', async () => {
    const h = await harness({ events: true });
    const id = await drain(h);
    const { list, lastSeq } = await events(h);
    const kinds = list.map((e) => e.kind);
    expect(kinds[0]).toBe('node.disabled');
    expect(kinds[1]).toBe('migration.planned');
    expect(kinds.at(-1)).toBe('migration.completed');
    expect(kinds.filter((k) => k === 'migration.completed')).toHaveLength(1);
    expect(list.map((e) => Number(e.eventSeq))).toEqual(list.map((_, i) => i + 1));
    expect(lastSeq).toBe(list.length);
    expect(list[0]).toMatchObject({ host: A, partition: 'cluster01', actor: KEY });
    expect(list[1]).toMatchObject({ migrationId: id, host: A, actor: KEY });
    // Every item reached completed, as observed, and each item event names its destination.
    const itemEvents = list.filter((e) => e.kind === 'migration.item');
    const detail = (e: any, k: string) => items(e.detailSet).find((d) => d.key === k)?.value;
    const lastByInstance = new Map(itemEvents.map((e) => [e.instanceId, detail(e, 'to')]));
    expect([...lastByInstance.values()]).toEqual(['completed', 'completed']);
    expect(itemEvents.every((e) => detail(e, 'destination') === B)).toBe(true);
  });

  it('filters: kind, host (as source or destination), instance, migration, time range, and the AfterSeq cursor', async () => {
    const h = await harness({ events: true });
    const id = await drain(h);
    const all = (await events(h)).list;
    const seqs = (l: any[]) => l.map((e) => Number(e.eventSeq));
    expect((await events(h, { 'Kind.1': 'node.disabled', 'Kind.2': 'migration.completed' })).list.map((e) => e.kind)).toEqual(['node.disabled', 'migration.completed']);
    expect(seqs((await events(h, { Host: B })).list)).toEqual(seqs(all.filter((e) => e.kind === 'migration.item')));
    const inst = all.find((e) => e.kind === 'migration.item').instanceId as string;
    expect((await events(h, { InstanceId: inst })).list.every((e) => e.instanceId === inst)).toBe(true);
    expect(seqs((await events(h, { MigrationId: id })).list)).toEqual(seqs(all.filter((e) => e.migrationId === id)));
    expect(seqs((await events(h, { AfterSeq: '2' })).list)).toEqual(seqs(all).slice(2));
    const lastTime = all.at(-1).timestamp as string;
    expect((await events(h, { StartTime: lastTime })).list.map((e) => e.timestamp)).toEqual(all.filter((e) => e.timestamp >= lastTime).map((e) => e.timestamp));
    expect((await events(h, { EndTime: '2013-01-01T00:00:00Z' })).list).toEqual([]);
  });

  it('pages with MaxResults and NextToken: every event once, in order', async () => {
    const h = await harness({ events: true });
    await drain(h);
    const all = (await events(h)).list.map((e) => e.eventSeq);
    const got: string[] = [];
    let token: string | undefined;
    do {
      const page = await events(h, { MaxResults: '5', ...(token ? { NextToken: token } : {}) });
      got.push(...page.list.map((e) => e.eventSeq));
      token = page.nextToken;
    } while (token);
    expect(all.length).toBeGreaterThan(5);
    expect(got).toEqual(all);
  });

  it('CancelMigration: cancel-requested by the key, then migration.cancelled once the plan is final', async () => {
    const h = await harness({ events: true });
    await launchRunning(h, 'cluster01', 'm1.small', 1);
    const m = await query(h.app, { Action: 'MigrateInstances', SourceHost: A });
    const id = m.doc.MigrateInstancesResponse.migrationId as string;
    const c = await query(h.app, { Action: 'CancelMigration', MigrationId: id, AWSAccessKeyId: KEY });
    expect(c.status, c.text).toBe(200);
    await watcher(h).runRound();
    const kinds = (await events(h, { MigrationId: id })).list.map((e) => [e.kind, e.actor]);
    expect(kinds).toEqual([['migration.planned', 'admin'], ['migration.cancel-requested', KEY], ['migration.item', 'system'], ['migration.cancelled', 'system']]);
  });

  it('WaitSeconds: a follower\'s long poll answers as soon as a matching event is recorded, or empty once the time is over', async () => {
    const h = await harness({ events: true });
    await h.events!.record([{ kind: 'ha.alert', message: 'first' }]);
    let settled = false;
    const timers = h.clock.pendingTimers();
    const waiting = events(h, { AfterSeq: '1', WaitSeconds: '20', 'Kind.1': 'node.disabled' }).finally(() => { settled = true; });
    // Not answered by an event of another kind.
    await h.events!.record([{ kind: 'ha.alert', message: 'other kind' }]);
    await eventually(() => h.clock.pendingTimers() > timers, 'the poll waits on the clock');
    expect(settled).toBe(false);
    const r = await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: A });
    expect(r.status).toBe(200);
    const got = await waiting;
    expect(got.list.map((e) => [e.eventSeq, e.kind])).toEqual([['3', 'node.disabled']]);

    const timersNow = h.clock.pendingTimers();
    const empty = events(h, { AfterSeq: '3', WaitSeconds: '5' });
    await eventually(() => h.clock.pendingTimers() > timersNow, 'the second poll waits');
    h.clock.advance(5000);
    expect((await empty).list).toEqual([]);
  });

  it('DisableService with a Reason: who, what, when and why; a bad Reason is refused and records nothing', async () => {
    const h = await harness({ events: true });
    const bad = await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: A, Reason: 'two\nlines' });
    expect(errorCode(bad)).toBe('InvalidParameterValue');
    expect(h.events!.state().nextSeq).toBe(1);
    const r = await query(h.app, { Action: 'DisableService', Type: 'NODE', Host: A, Reason: 'replacing a DIMM', AWSAccessKeyId: KEY });
    expect(r.status, r.text).toBe(200);
    const [e] = (await events(h)).list;
    expect(e).toMatchObject({ kind: 'node.disabled', host: A, actor: KEY, timestamp: new Date(h.clock.now()).toISOString() });
    expect(items(e.detailSet)).toEqual([{ key: 'previousState', value: 'enabled' }, { key: 'reason', value: 'replacing a DIMM' }]);
    expect(e.message).toContain('replacing a DIMM');
  });

  it('a change that waits in the gate: gate.queued, then gate.released (admitted) after the change before it answered', async () => {
    const h = await harness({ events: true });
    const held = h.clusters.hold('ccModifyNode');
    const first = query(h.app, { Action: 'DisableService', Type: 'NODE', Host: A });
    await held.reached;
    const second = query(h.app, { Action: 'EnableService', Type: 'NODE', Host: B });
    await eventually(() => h.events!.select({ kinds: ['gate.queued'] }).length === 1, 'the second change queued');
    held.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    const list = (await events(h, { 'Kind.1': 'gate.queued', 'Kind.2': 'gate.released' })).list;
    expect(list.map((e) => e.kind)).toEqual(['gate.queued', 'gate.released']);
    expect(list[1].message).toMatch(/EnableService of node 127\.0\.12\.12 admitted/);
  });

  it('host HA\'s log is in the stream: transitions, fences apart, each copied once', async () => {
    const h = await harness({ events: true });
    await h.store.update((d) => appendHaEvents(d.ha, [
      { at: h.clock.now(), host: A, kind: 'transition', level: 'warn', from: 'AVAILABLE', to: 'SUSPECT', message: 'missed heartbeats' },
      { at: h.clock.now(), host: A, kind: 'transition', level: 'critical', from: 'DEGRADED', to: 'FENCING', message: 'fencing' },
    ]));
    const first = (await events(h)).list;
    expect(first.map((e) => [e.kind, e.host, e.actor])).toEqual([['ha.transition', A, 'ha'], ['ha.fence', A, 'ha']]);
    await h.store.update((d) => appendHaEvents(d.ha, [{ at: h.clock.now(), host: 'global', kind: 'alert', level: 'info', message: 'HA configured' }]));
    const second = (await events(h)).list;
    expect(second.map((e) => e.kind)).toEqual(['ha.transition', 'ha.fence', 'ha.alert']);
  });

  it.each([
    [{ StartTime: 'yesterday' }, 'InvalidParameterValue'],
    [{ StartTime: '2013-06-01T12:00:00Z', EndTime: '2013-06-01T11:00:00Z' }, 'InvalidParameterCombination'],
    [{ 'Kind.1': 'migration.exploded' }, 'InvalidParameterValue'],
    [{ AfterSeq: '-1' }, 'InvalidParameterValue'],
    [{ AfterSeq: '99' }, 'InvalidEventCursor'],
    [{ NextToken: 'not-a-token' }, 'InvalidPaginationToken'],
    [{ MaxResults: '2' }, 'InvalidParameterValue'],
    [{ Host: 'not-a-host' }, 'InvalidParameterValue'],
    [{ MigrationId: 'mig-1' }, 'InvalidMigrationID.Malformed'],
    [{ Bogus: 'x' }, 'UnknownParameter'],
  ])('%j is refused with %s, and nothing is recorded', async (params, code) => {
    const h = await harness({ events: true });
    const r = await query(h.app, { Action: 'DescribeEvents', ...params });
    expect(r.status, r.text).toBe(400);
    expect(errorCode(r)).toBe(code);
    expect(h.events!.state().nextSeq).toBe(1);
  });

  it('is admin-only and answers ServiceUnavailable on a CLC built without the stream', async () => {
    const h = await harness();
    const r = await query(h.app, { Action: 'DescribeEvents' });
    expect(r.status).toBe(503);
    expect(errorCode(r)).toBe('ServiceUnavailable');
  });
});
