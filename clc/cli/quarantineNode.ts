/**
 * euca-quarantine-node <node> [-r reason] [-p partition] and euca-unquarantine-node <node> [-p partition]
 * (issue 18): isolate a node suspected compromised, or lift that (the node stays disabled; enable it
 * with euca-modify-service -s ENABLED). Answers once the node has persisted the change, then prints the
 * service row, the node (with its QUARANTINE row while it holds) and the zone's matrix.
 */
import type { CliCommand } from './command.js';
import { matrixLines, nodeLines, serviceLine } from './format.js';
import { readResponse } from './responses.js';

const NODE_ARGUMENT = 'the node\'s host address, or its service full name (arn:euca:eucalyptus:PARTITION:node:HOST/)';

function target(node: string, opts: Readonly<Record<string, unknown>>): Record<string, string> {
  const params: Record<string, string> = node.startsWith('arn:') ? { ServiceId: node } : { Host: node };
  if (typeof opts.partition === 'string') params.Partition = opts.partition;
  return params;
}

export const quarantineNodeCommand: CliCommand = {
  name: 'euca-quarantine-node',
  description: 'Quarantine a node suspected compromised: disabled, takes no instances, its instances move only when named',
  configure: (cmd) => cmd
    .option('-r, --reason <text>', 'why (shown by euca-describe-nodes and euca-describe-services)')
    .option('-p, --partition <name>', 'the partition the node is in (found automatically if omitted)')
    .argument('<node>', NODE_ARGUMENT),
  async run({ client, url, args, opts }) {
    const params = target(String(args[0]), opts);
    if (typeof opts.reason === 'string') params.Reason = opts.reason;
    const r = readResponse('QuarantineNode', await client.call('QuarantineNode', params), url);
    return { json: r, lines: [...r.serviceStatuses.map(serviceLine), ...nodeLines(r.node), ...matrixLines(r.resourceMatrix)] };
  },
};

export const unquarantineNodeCommand: CliCommand = {
  name: 'euca-unquarantine-node',
  description: 'Lift a node\'s quarantine; the node stays disabled until enabled (euca-modify-service -s ENABLED)',
  configure: (cmd) => cmd
    .option('-p, --partition <name>', 'the partition the node is in (found automatically if omitted)')
    .argument('<node>', NODE_ARGUMENT),
  async run({ client, url, args, opts }) {
    const r = readResponse('QuarantineNode', await client.call('UnquarantineNode', target(String(args[0]), opts)), url);
    return { json: r, lines: [...r.serviceStatuses.map(serviceLine), ...nodeLines(r.node), ...matrixLines(r.resourceMatrix)] };
  },
};
