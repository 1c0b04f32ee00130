/**
 * euca-describe-instance-types [TYPE...] [--show-capacity] [--by-zone]: the VM types, and with
 * --show-capacity how many instances of each the zones have room for (used / total, used %), per
 * zone with --by-zone. In euca2ools --by-zone alone asks for the capacity but prints no capacity
 * column (its own args are not updated); here --by-zone shows it, as one would expect.
 */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { instanceTypeLines, uncountedZoneWarnings } from './instanceTypeFormat.js';
import { readResponse } from './responses.js';

const describeInstanceTypesCommand: CliCommand = {
  name: 'euca-describe-instance-types',
  description: 'List the VM types (CPUs, memory, disk); --show-capacity adds how many of each the zones have room for',
  configure: (cmd) => cmd
    .argument('[types...]', 'only these VM types')
    .option('--show-capacity', 'show used / total instances of each type over every zone')
    .option('--by-zone', 'show the capacity of each availability zone separately'),
  async run({ client, url, args, opts }) {
    const byZone = opts.byZone === true;
    const showCapacity = byZone || opts.showCapacity === true;
    const params = { ...listParams('InstanceType', (args[0] as string[] | undefined) ?? []), ...(showCapacity ? { Availability: 'true' } : {}) };
    const r = readResponse('DescribeInstanceTypes', await client.call('DescribeInstanceTypes', params), url);
    return { json: r, lines: instanceTypeLines(r, { showCapacity, byZone }), warnings: uncountedZoneWarnings(r.unavailablePartitionSet) };
  },
};

await runCli(describeInstanceTypesCommand);
