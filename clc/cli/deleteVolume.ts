/** euca-delete-volume: see volumeCommands.ts. */
import { runCli } from './command.js';
import { deleteVolumeCommand } from './volumeCommands.js';

await runCli(deleteVolumeCommand);
