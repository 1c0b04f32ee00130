/** euca-create-volume: see volumeCommands.ts. */
import { runCli } from './command.js';
import { createVolumeCommand } from './volumeCommands.js';

await runCli(createVolumeCommand);
