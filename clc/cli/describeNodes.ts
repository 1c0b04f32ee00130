/** euca-describe-nodes: every node with its state, use and instances. */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { nodeLines, unavailableWarnings } from './format.js';
import { readResponse } from './responses.js';

const describeNodesCommand: CliCommand = {
  name: 'euca-describe-nodes',
  description: 'List every node: partition, host, state, cores/memory/disk used of total, and its instances',
  configure: (cmd) => cmd
    .option('-p, --partition <name>', 'only nodes of this partition')
    .argument('[host]', 'only this node'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = {};
    if (typeof opts.partition === 'string') params.ByPartition = opts.partition;
    if (typeof args[0] === 'string') params.ByHost = args[0];
    const r = readResponse('DescribeNodes', await client.call('DescribeNodes', params), url);
    return { json: r, lines: r.nodeSet.flatMap(nodeLines), warnings: unavailableWarnings(r.unavailablePartitionSet) };
  },
};

await runCli(describeNodesCommand);
