/**
 * euca-configure-ha HOST [-p PARTITION] [--agent fence_X] [--address ADDR] [--port N] [--username U]
 * [--password-file FILE | --password-env VAR] [--timeout-ms N] [--[no-]ssl-insecure] [--systems-uri PATH]
 * [--redfish-uri PATH]: a node's BMC for fencing (merged into its current settings) and its host-HA
 * record. Prints its HOSTHA and BMC rows (never the password).
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
    .option('--timeout-ms <ms>', 'bound on one fence agent run')
    .option('--ssl-insecure', 'fence_redfish: do not verify the BMC\'s certificate (a self-signed one)')
    .option('--no-ssl-insecure', 'fence_redfish: verify the BMC\'s certificate again')
    .option('--systems-uri <path>', 'fence_redfish: the system\'s resource, e.g. /redfish/v1/Systems/1 ("" to discover it)')
    .option('--redfish-uri <path>', 'fence_redfish: the service root, if not /redfish/v1 ("" for the default)'),
  validate: (opts) => (opts.passwordFile !== undefined && opts.passwordEnv !== undefined ? 'give --password-file or --password-env, not both' : undefined),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { Host: String(args[0]) };
    const map: Record<string, string> = {
      partition: 'Partition', agent: 'Agent', address: 'Address', port: 'Port', username: 'Username', timeoutMs: 'TimeoutMs', systemsUri: 'SystemsUri', redfishUri: 'RedfishUri',
    };
    for (const [opt, param] of Object.entries(map)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
    if (typeof opts.sslInsecure === 'boolean') params.SslInsecure = String(opts.sslInsecure);
    const password = await readBmcPassword(opts, process.env);
    if (password !== undefined) params.Password = password;
    const r = readResponse('HostHA', await client.call('ConfigureHAForHost', params), url);
    return { json: r, lines: hostHaLines(r.host) };
  },
};

await runCli(configureHaCommand);
