/** euca-describe-ha-config: global and per-partition host-HA settings, per-node switches and BMCs, suspensions. */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { haConfigLines } from './haFormat.js';
import { readResponse } from './responses.js';

const describeHaConfigCommand: CliCommand = {
  name: 'euca-describe-ha-config',
  description: 'Show host-HA configuration: global and partition settings, node switches and BMCs (never passwords), suspensions',
  configure: (cmd) => cmd,
  async run({ client, url }) {
    const r = readResponse('HAConfigurations', await client.call('ListHostHAConfigurations', {}), url);
    return { json: r, lines: haConfigLines(r) };
  },
};

await runCli(describeHaConfigCommand);
