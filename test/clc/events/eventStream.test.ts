/**
 * The event stream over its real file (events.json in a temp dir): events and every cursor survive a
 * reopen (a CLC restart) with seqs that go on, never reused; appends that arrive during a write share
 * the next one (group commit); a write that fails rejects every append of its batch and changes
 * nothing; HA's log is copied once, by its id, with any entries HA dropped first named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventsStore } from '../../../clc/events/eventStore.js';
import { EventStream } from '../../../clc/events/eventStream.js';
import type { HaLogEvent } from '../../../clc/ha/haState.js';
import { ManualClock } from '../../../shared/clock.js';
import { storeWrite } from '../../../shared/metrics/channels.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(dir?: string, history?: number): Promise<{ dir: string; stream: EventStream }> {
  const d = dir ?? mkdtempSync(join(tmpdir(), 'ferry-events-'));
  if (!dir) dirs.push(d);
  const stream = new EventStream({ store: await openEventsStore(d), clock: new ManualClock(Date.UTC(2026, 0, 1)), ...(history !== undefined ? { history } : {}) });
  return { dir: d, stream };
}

const ev = (message: string) => ({ kind: 'node.disabled' as const, host: '127.0.77.1', message });

describe('EventStream on events.json', () => {
  it('a reopened stream has the same events, cursors and tracked plans, and numbers on from where it stopped', async () => {
    const { dir, stream } = await open(undefined, 100);
    await stream.record([ev('a'), ev('b')]);
    await stream.update((s) => {
      s.webhooks['https://hooks.example.com/'] = { delivered: 1 };
      s.migrations['mig-00000001'] = { partition: 'cluster01', source: '127.0.77.1', items: { 'i-00000001': 'migrating' }, final: false };
    });
    const again = (await open(dir, 100)).stream;
    expect(again.state()).toEqual(stream.state());
    const [c] = await again.record([ev('c')]);
    expect(c?.seq).toBe(3);
  });

  it('bounded: the oldest go first, and a reopen keeps the seq going past the dropped ones', async () => {
    const { dir, stream } = await open(undefined, 100);
    for (let i = 0; i < 3; i++) await stream.record(Array.from({ length: 50 }, (_, j) => ev(`${i}-${j}`)));
    expect(stream.state().events.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 51 + i));
    const [next] = await (await open(dir, 100)).stream.record([ev('after')]);
    expect(next?.seq).toBe(151);
  });

  it('appends that arrive during a write share the next one (group commit); each caller gets its own records', async () => {
    const { stream } = await open();
    let writes = 0;
    const off = storeWrite.subscribe((e) => { if (e.kind === 'ferry-clc-events') writes++; });
    try {
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => stream.record([ev(`e${i}`)])));
      expect(all.map((r) => r[0]?.message)).toEqual(Array.from({ length: 20 }, (_, i) => `e${i}`));
      expect(all.map((r) => r[0]?.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(writes).toBeLessThan(20);
      expect(writes).toBeGreaterThanOrEqual(1);
    } finally {
      off();
    }
  });

  it('a failed write rejects its appends with StoreWriteFailed and changes nothing', async () => {
    const { dir, stream } = await open();
    await stream.record([ev('kept')]);
    rmSync(dir, { recursive: true, force: true });
    await expect(stream.record([ev('lost')])).rejects.toMatchObject({ code: 'StoreWriteFailed' });
    expect(stream.state().events.map((e) => e.message)).toEqual(['kept']);
    expect(stream.state().nextSeq).toBe(2);
  });

  it('records are frozen once appended: a snapshot shared between writes cannot be changed through one', async () => {
    const { stream } = await open();
    const [r] = await stream.record([ev('x')]);
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r?.details)).toBe(true);
  });

  it('copies host HA\'s log by id: once each, concurrent copies included, and names entries HA dropped before the copy', async () => {
    const { stream } = await open();
    const ha = (id: number, to: HaLogEvent['to']): HaLogEvent => ({ id, at: 1, host: '127.0.77.1', kind: 'transition', level: 'info', from: 'AVAILABLE', to, message: `m${id}` });
    let log: HaLogEvent[] = [ha(1, 'SUSPECT'), ha(2, 'FENCING')];
    await Promise.all([stream.copyHaEvents(() => log), stream.copyHaEvents(() => log)]);
    expect(stream.state().events.map((e) => [e.kind, e.details.haEventId])).toEqual([['ha.transition', '1'], ['ha.fence', '2']]);
    // HA's bounded log moved on by more than it shows: 3 and 4 are gone.
    log = [ha(5, 'FENCED')];
    await stream.copyHaEvents(() => log);
    expect(stream.state().events.slice(2).map((e) => [e.kind, e.details.lost ?? e.details.haEventId])).toEqual([['ha.alert', '2'], ['ha.fence', '5']]);
    expect(await stream.copyHaEvents(() => log)).toBe(0);
  });
});
