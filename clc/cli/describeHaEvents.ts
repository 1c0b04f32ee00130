/**
 * euca-describe-ha-events [--host H] [--level L] [--since TIME] [--max N] [--after ID] [--follow]: the
 * HA event log, oldest first. --follow keeps printing new events as they are logged (a long poll from
 * the last eventId seen: none missed, none twice) until interrupted.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { haEventLine } from './haFormat.js';
import { readResponse } from './responses.js';

const describeHaEventsCommand: CliCommand = {
  name: 'euca-describe-ha-events',
  description: 'Show the host-HA event log: transitions, alerts and operator changes',
  configure: (cmd) => cmd
    .option('--host <host>', 'only this node (or global, or partition:NAME)')
    .addOption(new Option('--level <level>', 'only this level').choices(['info', 'warn', 'critical']))
    .option('--since <time>', 'only events at or after this ISO 8601 UTC time (2013-06-01T12:00:00Z)')
    .option('--max <n>', 'only the newest N (with --after: the oldest N after it)')
    .option('--after <id>', 'only events after this eventId')
    .option('--follow', 'keep printing new events as they are logged, until interrupted'),
  async run({ client, url, opts, live }) {
    const params: Record<string, string> = {};
    const map: Record<string, string> = { host: 'Host', level: 'Level', since: 'Since', max: 'MaxResults', after: 'After' };
    for (const [opt, param] of Object.entries(map)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
    const r = readResponse('HAEvents', await client.call('DescribeHAEvents', params), url);
    if (opts.follow !== true) return { json: r, lines: r.eventSet.map(haEventLine) };
    let events = r.eventSet;
    let cursor = params.After ?? '0';
    for (;;) {
      for (const e of events) live.write(`${haEventLine(e)}\n`);
      cursor = events.at(-1)?.eventId || cursor;
      const { MaxResults: _max, Since: _since, ...filters } = params;
      events = readResponse('HAEvents', await client.call('DescribeHAEvents', { ...filters, After: cursor, WaitSeconds: '20' }), url).eventSet;
    }
  },
};

await runCli(describeHaEventsCommand);
