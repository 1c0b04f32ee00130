/** euca-attach-volume: see volumeCommands.ts. */
import { runCli } from './command.js';
import { attachVolumeCommand } from './volumeCommands.js';

await runCli(attachVolumeCommand);
