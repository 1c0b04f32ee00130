/** euca-enable-ha / euca-disable-ha (HOST | -c PARTITION): host HA switched for a node or a partition. */
import type { CliCommand } from './command.js';
import { hostHaLines } from './haFormat.js';
import { readResponse } from './responses.js';

export function haSwitchCommand(enable: boolean): CliCommand {
  const verb = enable ? 'Enable' : 'Disable';
  return {
    name: `euca-${verb.toLowerCase()}-ha`,
    description: `${verb} host HA for a node or for a whole partition`,
    configure: (cmd) => cmd
      .argument('[host]', 'the node\'s host address')
      .option('-c, --cluster <partition>', 'the whole partition instead'),
    validate: (opts, args) => ((args[0] === undefined) === (opts.cluster === undefined) ? 'give a HOST or -c PARTITION (one of them)' : undefined),
    async run({ client, url, args, opts }) {
      if (typeof opts.cluster === 'string') {
        const r = readResponse('HostHASet', await client.call(`${verb}HAForCluster`, { Partition: opts.cluster }), url);
        return { json: r, lines: r.hostSet.flatMap(hostHaLines) };
      }
      const r = readResponse('HostHA', await client.call(`${verb}HAForHost`, { Host: String(args[0]) }), url);
      return { json: r, lines: hostHaLines(r.host) };
    },
  };
}
