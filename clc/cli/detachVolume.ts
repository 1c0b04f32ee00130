/** euca-detach-volume: see volumeCommands.ts. */
import { runCli } from './command.js';
import { detachVolumeCommand } from './volumeCommands.js';

await runCli(detachVolumeCommand);
