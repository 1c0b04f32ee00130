/**
 * euca-pause-instances <ids...> and euca-unpause-instances <ids...> (issue 18, Ferry extensions):
 * freeze running instances in place, or let them run again. All ids are checked before any is
 * changed. Prints `INSTANCE id state paused|unpaused node was-paused|was-unpaused` per instance.
 */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { pauseLines } from './format.js';
import { readResponse } from './responses.js';

function pauseCommand(paused: boolean): CliCommand {
  const action = paused ? 'PauseInstances' : 'UnpauseInstances';
  return {
    name: paused ? 'euca-pause-instances' : 'euca-unpause-instances',
    description: paused
      ? 'Pause running instances in place (the hypervisor suspends them; they stay running, paused); all ids are checked first'
      : 'Let paused instances run again; all ids are checked first',
    configure: (cmd) => cmd.argument('<ids...>', 'instance ids'),
    async run({ client, url, args }) {
      const params = listParams('InstanceId', args[0] as string[]);
      const r = readResponse(action, await client.call(action, params), url);
      return { json: r, lines: pauseLines(r) };
    },
  };
}

export const pauseInstancesCommand = pauseCommand(true);
export const unpauseInstancesCommand = pauseCommand(false);
