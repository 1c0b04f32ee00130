/**
 * euca-configure-ha HOST [-p PARTITION] [--agent fence_X] [--address ADDR] [--port N] [--username U]
 * [--password-file FILE | --password-env VAR] [--timeout-ms N]: a node's BMC for fencing (merged into
 * its current settings) and its host-HA record. Prints its HOSTHA and BMC rows (never the password).
 */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { readBmcPassword } from './haArgs.js';
import { hostHaLines } from './haFormat.js';
import { readResponse } from './responses.js';

const configureHaCommand: CliCommand = {
  name: 'euca-configure-ha',
  description: 'Configure host HA for a node: its BMC (fence agent, address, port, user, password) for fencing',
  configure: (cmd) => cmd
    .argument('<host>', 'the node\'s host address')
    .option('-p, --partition <name>', 'the node\'s partition (found automatically if omitted)')
    .option('--agent <name>', 'fence agent, e.g. fence_ipmilan')
    .option('--address <addr>', 'the BMC\'s address')
    .option('--port <n>', 'the BMC\'s port')
    .option('--username <user>', 'the BMC user')
    .option('--password-file <file>', 'read the BMC password from the first line of this file')
    .option('--password-env <var>', 'read the BMC password from this environment variable')
    .option('--timeout-ms <ms>', 'bound on one fence agent run'),
  validate: (opts) => (opts.passwordFile !== undefined && opts.passwordEnv !== undefined ? 'give --password-file or --password-env, not both' : undefined),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { Host: String(args[0]) };
    const map: Record<string, string> = { partition: 'Partition', agent: 'Agent', address: 'Address', port: 'Port', username: 'Username', timeoutMs: 'TimeoutMs' };
    for (const [opt, param] of Object.entries(map)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
    const password = await readBmcPassword(opts, process.env);
    if (password !== undefined) params.Password = password;
    const r = readResponse('HostHA', await client.call('ConfigureHAForHost', params), url);
    return { json: r, lines: hostHaLines(r.host) };
  },
};

await runCli(configureHaCommand);
