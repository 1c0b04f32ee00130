/** euca-describe-volumes: see volumeCommands.ts. */
import { runCli } from './command.js';
import { describeVolumesCommand } from './volumeCommands.js';

await runCli(describeVolumesCommand);
