/** euca-describe-services: the CLC, each cluster and each node as a service with its state. */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { serviceLine } from './format.js';
import { readResponse } from './responses.js';

const describeServicesCommand: CliCommand = {
  name: 'euca-describe-services',
  description: 'List services (eucalyptus, cluster, node) with their state: ENABLED, DISABLED or NOTREADY',
  configure: (cmd) => cmd
    .option('--filter-type <type>', 'only services of this type (eucalyptus, cluster, node)')
    .option('--filter-partition <name>', 'only services of this partition')
    .option('--filter-state <state>', 'only services in this state'),
  async run({ client, url, opts }) {
    const params: Record<string, string> = {};
    if (typeof opts.filterType === 'string') params.ByServiceType = opts.filterType;
    if (typeof opts.filterPartition === 'string') params.ByPartition = opts.filterPartition;
    if (typeof opts.filterState === 'string') params.ByState = opts.filterState;
    const r = readResponse('DescribeServices', await client.call('DescribeServices', params), url);
    return { json: r, lines: r.serviceStatuses.map(serviceLine) };
  },
};

await runCli(describeServicesCommand);
