/** euca-fence-host HOST / euca-confirm-host-fenced HOST: an operator's fencing commands. */
import type { CliCommand } from './command.js';
import { hostHaLines } from './haFormat.js';
import { readResponse } from './responses.js';

export function fenceCommand(action: 'FenceHost' | 'ConfirmHostFenced'): CliCommand {
  return {
    name: action === 'FenceHost' ? 'euca-fence-host' : 'euca-confirm-host-fenced',
    description: action === 'FenceHost'
      ? 'Fence a node now: maintenance (DisableService), then power off through its BMC; retries a fence that needs an operator'
      : 'Vouch that a node being fenced is powered off (its BMC failed); its instances may then restart elsewhere',
    configure: (cmd) => {
      const c = cmd.argument('<host>', 'the node\'s host address');
      return action === 'FenceHost' ? c.option('--force', 'fence it even though it is up and healthy (refused as HostHealthy otherwise)') : c;
    },
    async run({ client, url, args, opts }) {
      const force = action === 'FenceHost' && opts.force === true;
      const r = readResponse('HostHA', await client.call(action, { Host: String(args[0]), ...(force ? { Force: 'true' } : {}) }), url);
      return { json: r, lines: hostHaLines(r.host) };
    },
  };
}
