/** The euca-unpause-instances executable. */
import { runCli } from './command.js';
import { unpauseInstancesCommand } from './pauseInstances.js';

await runCli(unpauseInstancesCommand);
