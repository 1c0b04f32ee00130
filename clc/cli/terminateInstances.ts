/** euca-terminate-instances <ids...>: prints `INSTANCE id previous-state current-state` per instance. */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { terminateLines } from './format.js';
import { readResponse } from './responses.js';

const terminateInstancesCommand: CliCommand = {
  name: 'euca-terminate-instances',
  description: 'Terminate instances (all ids are checked before any is terminated)',
  configure: (cmd) => cmd.argument('<ids...>', 'instance ids'),
  async run({ client, url, args }) {
    const params = listParams('InstanceId', args[0] as string[]);
    const r = readResponse('TerminateInstances', await client.call('TerminateInstances', params), url);
    return { json: r, lines: terminateLines(r) };
  },
};

await runCli(terminateInstancesCommand);
