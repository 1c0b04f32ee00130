/**
 * euca-describe-events [--start TIME] [--end TIME] [--host H] [--instance ID] [--migration ID]
 * [--kind K]... [--after SEQ] [--max N] [--follow]: the CLC's event stream (DescribeEvents), oldest
 * first, every page. --follow then keeps printing new events as they are recorded (a long poll from
 * the last seq seen: none missed, none twice) until interrupted.
 */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { streamEventLine } from './eventFormat.js';
import { readResponse, type StreamEventReading } from './responses.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

const describeEventsCommand: CliCommand = {
  name: 'euca-describe-events',
  description: 'Show the event stream: migrations, maintenance changes, gate waits, host-HA transitions and fences',
  configure: (cmd) => cmd
    .option('--start <time>', 'only events at or after this ISO 8601 UTC time (2013-06-01T12:00:00Z)')
    .option('--end <time>', 'only events at or before this ISO 8601 UTC time')
    .option('--host <host>', 'only events of this node (as host, or as a migration item\'s destination)')
    .option('--instance <id>', 'only events of this instance')
    .option('--migration <id>', 'only events of this migration')
    .option('--kind <kind>', 'only this kind (repeatable): migration.planned, node.disabled, ha.fence, ...', collect)
    .option('--after <seq>', 'only events after this seq')
    .option('--max <n>', 'events per request (5-1000; every page is printed)')
    .option('--follow', 'keep printing new events as they are recorded, until interrupted'),
  async run({ client, url, opts, live }) {
    const params: Record<string, string> = {};
    const map: Record<string, string> = { start: 'StartTime', end: 'EndTime', host: 'Host', instance: 'InstanceId', migration: 'MigrationId', after: 'AfterSeq', max: 'MaxResults' };
    for (const [opt, param] of Object.entries(map)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
    const kinds = Array.isArray(opts.kind) ? (opts.kind as string[]) : [];
    kinds.forEach((k, i) => { params[`Kind.${i + 1}`] = k; });
    const events: StreamEventReading[] = [];
    let lastSeq = '0';
    for (let token = ''; ;) {
      const r = readResponse('DescribeEvents', await client.call('DescribeEvents', token === '' ? params : { ...params, NextToken: token }), url);
      events.push(...r.eventSet);
      lastSeq = r.lastSeq;
      if (r.nextToken === '') break;
      token = r.nextToken;
    }
    if (opts.follow !== true) return { json: { eventSet: events, lastSeq }, lines: events.map(streamEventLine) };
    // Follow from the newest seen, or from the newest recorded when none matched: nothing before it is reprinted.
    let cursor = events.at(-1)?.eventSeq ?? (params.AfterSeq !== undefined && Number(params.AfterSeq) > Number(lastSeq) ? params.AfterSeq : lastSeq);
    const { MaxResults: _max, StartTime: _start, AfterSeq: _after, ...filters } = params;
    let batch = events;
    for (;;) {
      for (const e of batch) live.write(`${streamEventLine(e)}\n`);
      cursor = batch.at(-1)?.eventSeq ?? cursor;
      batch = readResponse('DescribeEvents', await client.call('DescribeEvents', { ...filters, AfterSeq: cursor, WaitSeconds: '20' }), url).eventSet;
    }
  },
};

await runCli(describeEventsCommand);
