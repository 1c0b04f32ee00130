/**
 * euca-describe-host-ha [HOSTS...] [-p PARTITION] [--dry-run] [--events N]: per node HA knows, its
 * HOSTHA row, then BLOCKED, SUSPENDED, BMC, DRYRUN (what HA would do now) and its last N EVENT rows.
 */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { hostHaLines } from './haFormat.js';
import { readResponse } from './responses.js';

const describeHostHaCommand: CliCommand = {
  name: 'euca-describe-host-ha',
  description: 'Show host HA per node: state, why, whether it needs an operator, holds, BMC, and with --dry-run what HA would do now',
  configure: (cmd) => cmd
    .argument('[hosts...]', 'only these nodes')
    .option('-p, --partition <name>', 'only nodes of this partition')
    .option('--dry-run', 'say what HA would do next for each node, and when')
    .option('--events <n>', 'the last N events of each node (default 0)', '0'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { ...listParams('Host', (args[0] as string[] | undefined) ?? []), MaxEvents: String(opts.events) };
    if (typeof opts.partition === 'string') params.Partition = opts.partition;
    if (opts.dryRun === true) params.DryRun = 'true';
    const r = readResponse('HostHASet', await client.call('DescribeHostHA', params), url);
    return { json: r, lines: r.hostSet.flatMap(hostHaLines) };
  },
};

await runCli(describeHostHaCommand);
