/**
 * euca-configure-ha-instance INSTANCE --auto-repair off|migrate|failover|inherit: one instance's
 * auto-repair level (inherit drops it). Prints `AUTOREPAIR instance partition own cluster effective`.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { readResponse } from './responses.js';

const configureHaInstanceCommand: CliCommand = {
  name: 'euca-configure-ha-instance',
  description: 'Set the auto-repair level of one instance (the least destructive of it and its cluster\'s applies)',
  configure: (cmd) => cmd
    .argument('<instance>', 'the instance id (i-xxxxxxxx)')
    .addOption(new Option('--auto-repair <level>', 'what HA may do to it: off, migrate (drain), failover (also restart after a fence), inherit (the cluster\'s)')
      .choices(['off', 'migrate', 'failover', 'inherit']).makeOptionMandatory()),
  async run({ client, url, args, opts }) {
    const r = readResponse('InstanceAutoRepair', await client.call('ConfigureHAForInstance', { InstanceId: String(args[0]), AutoRepair: String(opts.autoRepair) }), url);
    return { json: r, lines: [['AUTOREPAIR', r.instanceId, r.partition, r.autoRepair, r.clusterAutoRepair, r.effectiveAutoRepair].join('\t')] };
  },
};

await runCli(configureHaInstanceCommand);
