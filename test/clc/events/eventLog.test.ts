/**
 * The event log's pure parts: appending numbers events durably and keeps the newest `limit`;
 * queries filter by time, host (or an item's destination), instance, migration, kind and a seq
 * cursor; a follower paging by AfterSeq (and a client paging by NextToken's keyset) never skips or
 * repeats an event, whatever the page sizes and however appends interleave with the reads.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { takePage } from '../../../clc/core/paging.js';
import { EVENT_PAGE_ORDER } from '../../../clc/api/actions/describeEvents.js';
import { appendEvents, droppedThrough, lastSeqOf, selectEvents, type EventFilter, type EventLog } from '../../../clc/events/eventLog.js';
import type { EventDraft } from '../../../clc/events/eventRecord.js';

const draft = (over: Partial<EventDraft> = {}): EventDraft => ({ kind: 'node.disabled', message: 'm', ...over });
const emptyLog = (): EventLog => ({ events: [], nextSeq: 1 });

describe('appendEvents', () => {
  it('numbers events from 1 in order, stamps them with now, and keeps only the newest `limit`; a seq is never reused', () => {
    const log = emptyLog();
    const first = appendEvents(log, [draft(), draft()], 1000, 3);
    expect(first.map((e) => [e.seq, e.time])).toEqual([[1, 1000], [2, 1000]]);
    appendEvents(log, [draft(), draft()], 2000, 3);
    expect(log.events.map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(droppedThrough(log)).toBe(1);
    expect(lastSeqOf(log)).toBe(4);
    log.events.length = 0;
    expect(appendEvents(log, [draft()], 3000, 3)[0]?.seq).toBe(5);
  });

  it('an empty log that dropped everything says so: droppedThrough is the last seq', () => {
    expect(droppedThrough({ events: [], nextSeq: 8 })).toBe(7);
    expect(droppedThrough(emptyLog())).toBe(0);
  });
});

describe('selectEvents', () => {
  const log = emptyLog();
  appendEvents(log, [draft({ kind: 'node.disabled', host: '127.0.0.1' })], 1000, 100);
  appendEvents(log, [draft({ kind: 'migration.planned', host: '127.0.0.1', migrationId: 'mig-00000001' })], 2000, 100);
  appendEvents(log, [draft({ kind: 'migration.item', host: '127.0.0.1', migrationId: 'mig-00000001', instanceId: 'i-00000001', details: { destination: '127.0.0.2' } })], 3000, 100);
  appendEvents(log, [draft({ kind: 'migration.completed', host: '127.0.0.1', migrationId: 'mig-00000001' })], 4000, 100);
  appendEvents(log, [draft({ kind: 'ha.fence', host: '127.0.0.3' })], 5000, 100);

  it.each<[string, EventFilter, number[]]>([
    ['no filter: all, oldest first', {}, [1, 2, 3, 4, 5]],
    ['time range, inclusive at both ends', { startTime: 2000, endTime: 4000 }, [2, 3, 4]],
    ['start only', { startTime: 4500 }, [5]],
    ['host: as the host, or as an item\'s destination', { host: '127.0.0.2' }, [3]],
    ['host of the source', { host: '127.0.0.1' }, [1, 2, 3, 4]],
    ['instance', { instanceId: 'i-00000001' }, [3]],
    ['migration', { migrationId: 'mig-00000001' }, [2, 3, 4]],
    ['kinds: any of them', { kinds: ['ha.fence', 'node.disabled'] }, [1, 5]],
    ['an empty kind list selects all', { kinds: [] }, [1, 2, 3, 4, 5]],
    ['a cursor: only later seqs', { afterSeq: 3 }, [4, 5]],
    ['a cursor with a filter', { afterSeq: 1, migrationId: 'mig-00000001', kinds: ['migration.completed'] }, [4]],
    ['a cursor at the end', { afterSeq: 5 }, []],
    ['filters that exclude each other', { host: '127.0.0.3', kinds: ['node.disabled'] }, []],
  ])('%s', (_what, filter, seqs) => {
    expect(selectEvents(log, filter).map((e) => e.seq)).toEqual(seqs);
  });
});

/** Steps of a run: append some events, or read one page (of a size) as a follower or a pager. */
const step = fc.oneof(
  fc.record({ append: fc.integer({ min: 1, max: 7 }) }),
  fc.record({ read: fc.integer({ min: 1, max: 6 }) }),
);

describe('following the stream', () => {
  it('by AfterSeq: the events read, in order, are every event appended, each once', () => {
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
      const log = emptyLog();
      let cursor = 0;
      const read: number[] = [];
      let t = 0;
      const readPage = (size: number): void => {
        const page = selectEvents(log, { afterSeq: cursor }).slice(0, size);
        read.push(...page.map((e) => e.seq));
        cursor = page.at(-1)?.seq ?? cursor;
      };
      for (const s of steps) {
        if ('append' in s) appendEvents(log, Array.from({ length: s.append }, () => draft()), ++t, 10_000);
        else readPage(s.read);
      }
      while (selectEvents(log, { afterSeq: cursor }).length > 0) readPage(3);
      expect(read).toEqual(log.events.map((e) => e.seq));
    }));
  });

  it('by NextToken\'s keyset cursor over a filtered list: pages never skip or repeat, appends between pages included', () => {
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), fc.boolean(), (steps, onlyFences) => {
      const log = emptyLog();
      const filter: EventFilter = onlyFences ? { kinds: ['ha.fence'] } : {};
      let cursor: number | undefined;
      let done = false;
      const read: number[] = [];
      let t = 0;
      const readPage = (size: number): void => {
        if (done) return;
        const page = takePage(selectEvents(log, filter), EVENT_PAGE_ORDER, cursor, size);
        read.push(...page.items.map((e) => e.seq));
        if (page.items.length > 0) cursor = page.items.at(-1)?.seq;
      };
      for (const s of steps) {
        if ('append' in s) appendEvents(log, Array.from({ length: s.append }, (_, i) => draft({ kind: (t + i) % 2 === 0 ? 'ha.fence' : 'node.enabled' })), ++t, 10_000);
        else readPage(s.read);
      }
      for (let i = 0; i < 1000 && takePage(selectEvents(log, filter), EVENT_PAGE_ORDER, cursor, 5).items.length > 0; i++) readPage(5);
      done = true;
      expect(read).toEqual(selectEvents(log, filter).map((e) => e.seq));
    }));
  });
});
