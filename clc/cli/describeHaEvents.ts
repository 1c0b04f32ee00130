/** euca-describe-ha-events [--host H] [--level L] [--since TIME] [--max N]: the HA event log, oldest first. */
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
    .option('--max <n>', 'only the newest N'),
  async run({ client, url, opts }) {
    const params: Record<string, string> = {};
    const map: Record<string, string> = { host: 'Host', level: 'Level', since: 'Since', max: 'MaxResults' };
    for (const [opt, param] of Object.entries(map)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
    const r = readResponse('HAEvents', await client.call('DescribeHAEvents', params), url);
    return { json: r, lines: r.eventSet.map(haEventLine) };
  },
};

await runCli(describeHaEventsCommand);
