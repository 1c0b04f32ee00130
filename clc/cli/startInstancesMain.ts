/** The euca-start-instances executable. */
import { runCli } from './command.js';
import { startInstancesCommand } from './powerInstances.js';

await runCli(startInstancesCommand);
