/**
 * euca-modify-service -s ENABLED|DISABLED <host> [-p partition] [-r reason]: node maintenance mode. Answers
 * once the node has persisted its new state, then prints the service row and the zone's matrix.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { matrixLines, serviceLine } from './format.js';
import { readResponse } from './responses.js';

const ACTIONS: Readonly<Record<string, string>> = { ENABLED: 'EnableService', DISABLED: 'DisableService' };

const modifyServiceCommand: CliCommand = {
  name: 'euca-modify-service',
  description: 'Enable or disable a node (maintenance mode)',
  configure: (cmd) => cmd
    .addOption(new Option('-s, --state <state>', 'the state to put the node in').choices(Object.keys(ACTIONS)).makeOptionMandatory())
    .option('-p, --partition <name>', 'the partition the node is in (found automatically if omitted)')
    .option('-r, --reason <text>', 'why, recorded with the change in the event stream (euca-describe-events)')
    .argument('<node>', 'the node\'s host address, or its service full name (arn:euca:eucalyptus:PARTITION:node:HOST/)'),
  async run({ client, url, args, opts }) {
    const node = String(args[0]);
    const params: Record<string, string> = { Type: 'NODE' };
    if (node.startsWith('arn:')) params.ServiceId = node;
    else params.Host = node;
    if (typeof opts.partition === 'string') params.Partition = opts.partition;
    if (typeof opts.reason === 'string') params.Reason = opts.reason;
    const action = ACTIONS[String(opts.state)] as string;
    const r = readResponse('ModifyService', await client.call(action, params), url);
    return { json: r, lines: [...r.serviceStatuses.map(serviceLine), ...matrixLines(r.resourceMatrix)] };
  },
};

await runCli(modifyServiceCommand);
