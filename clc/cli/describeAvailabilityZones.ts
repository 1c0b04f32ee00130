/** euca-describe-availability-zones [verbose] [zones...]: zones, and with `verbose` the resource matrix. */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { zoneLines } from './format.js';
import { readResponse } from './responses.js';

const describeAvailabilityZonesCommand: CliCommand = {
  name: 'euca-describe-availability-zones',
  description: 'List availability zones (partitions); "verbose" adds free / max per VM type',
  configure: (cmd) => cmd.argument('[zones...]', 'zone names, and/or "verbose"'),
  async run({ client, url, args }) {
    const params = listParams('ZoneName', (args[0] as string[] | undefined) ?? []);
    const r = readResponse('DescribeAvailabilityZones', await client.call('DescribeAvailabilityZones', params), url);
    return { json: r, lines: zoneLines(r) };
  },
};

await runCli(describeAvailabilityZonesCommand);
