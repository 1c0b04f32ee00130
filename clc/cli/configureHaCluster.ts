/**
 * euca-configure-ha-cluster [PARTITION] [--set NAME=VALUE]... [--max-unhealthy N|N%] [--unhealthy-range [MIN-MAX]|none] [--auto-repair
 * off|migrate|failover]: host-HA settings of a partition (or, without PARTITION, the global layer).
 * Prints the resulting HACONFIG rows.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { collectSetting } from './haArgs.js';
import { haConfigLines } from './haFormat.js';
import { readResponse } from './responses.js';

const configureHaClusterCommand: CliCommand = {
  name: 'euca-configure-ha-cluster',
  description: 'Configure host HA for a partition (or globally): settings, storm bound, auto-repair',
  configure: (cmd) => cmd
    .argument('[partition]', 'the partition; without it the global defaults every partition inherits')
    .option('--set <name=value>', 'a setting, e.g. fenceTimeoutMs=45000 (repeatable)', collectSetting)
    .option('--max-unhealthy <n>', 'storm protection: a host count (2) or a percentage (40%)')
    .option('--unhealthy-range <range>', 'storm protection as Cluster API\'s unhealthyRange: remediate only while [MIN-MAX] hosts are unhealthy (over --max-unhealthy); "none" removes it')
    .addOption(new Option('--auto-repair <level>', 'the partition\'s auto-repair level').choices(['off', 'migrate', 'failover'])),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { ...(opts.set as Record<string, string> | undefined) };
    if (typeof args[0] === 'string') params.Partition = args[0];
    if (typeof opts.maxUnhealthy === 'string') params.MaxUnhealthy = opts.maxUnhealthy;
    if (typeof opts.unhealthyRange === 'string') params.UnhealthyRange = opts.unhealthyRange;
    if (typeof opts.autoRepair === 'string') params.AutoRepair = opts.autoRepair;
    const r = readResponse('HAConfigurations', await client.call('ConfigureHAForCluster', params), url);
    return { json: r, lines: haConfigLines(r) };
  },
};

await runCli(configureHaClusterCommand);
