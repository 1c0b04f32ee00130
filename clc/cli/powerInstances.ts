/**
 * euca-stop-instances [-f|--force] <ids...>, euca-start-instances <ids...> and
 * euca-reboot-instances <ids...> (issue 18 part 5), as euca2ools names them. All ids are checked
 * before any is changed. Stop and start print `INSTANCE id previous-state current-state` per
 * instance (start adds the node it runs on, which may be another than before: re-homed); reboot
 * prints nothing, as euca2ools' does, and exits 0 once every instance was rebooted.
 */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { startLines, terminateLines } from './format.js';
import { readResponse } from './responses.js';

export const stopInstancesCommand: CliCommand = {
  name: 'euca-stop-instances',
  description: 'Stop running instances (a graceful shutdown; --force powers them off at once); all ids are checked first',
  configure: (cmd) => cmd.argument('<ids...>', 'instance ids')
    .option('-f, --force', 'power off without waiting for the guest to shut down'),
  async run({ client, url, args, opts }) {
    const params = { ...listParams('InstanceId', args[0] as string[]), ...(opts.force === true ? { Force: 'true' } : {}) };
    const r = readResponse('StopInstances', await client.call('StopInstances', params), url);
    return { json: r, lines: terminateLines(r) };
  },
};

export const startInstancesCommand: CliCommand = {
  name: 'euca-start-instances',
  description: 'Start stopped instances (on an enabled node: one whose node is in maintenance starts on another); all ids are checked first',
  configure: (cmd) => cmd.argument('<ids...>', 'instance ids'),
  async run({ client, url, args }) {
    const r = readResponse('StartInstances', await client.call('StartInstances', listParams('InstanceId', args[0] as string[])), url);
    return { json: r, lines: startLines(r) };
  },
};

export const rebootInstancesCommand: CliCommand = {
  name: 'euca-reboot-instances',
  description: 'Reboot running instances in place; all ids are checked first',
  configure: (cmd) => cmd.argument('<ids...>', 'instance ids'),
  async run({ client, url, args }) {
    const r = readResponse('RebootInstances', await client.call('RebootInstances', listParams('InstanceId', args[0] as string[])), url);
    return { json: r, lines: [] };
  },
};
