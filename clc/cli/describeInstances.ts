/** euca-describe-instances [ids...] [--filter name=value]... */
import { collectFilter, filterParams, listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { reservationLines, unavailableWarnings } from './format.js';
import { readResponse } from './responses.js';

const describeInstancesCommand: CliCommand = {
  name: 'euca-describe-instances',
  description: 'List instances by reservation',
  configure: (cmd) => cmd
    .argument('[ids...]', 'only these instances')
    .option('-F, --filter <name=value>', 'filter (repeatable): instance-state-name, availability-zone, instance-type, image-id, instance-id, reservation-id, node, migration-state', collectFilter),
  async run({ client, url, args, opts }) {
    const ids = (args[0] as string[] | undefined) ?? [];
    const params = { ...listParams('InstanceId', ids), ...filterParams((opts.filter as Map<string, string[]> | undefined) ?? new Map()) };
    const r = readResponse('DescribeInstances', await client.call('DescribeInstances', params), url);
    return { json: r, lines: r.reservationSet.flatMap(reservationLines), warnings: unavailableWarnings(r.unavailablePartitionSet) };
  },
};

await runCli(describeInstancesCommand);
