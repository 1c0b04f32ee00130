/** The euca-stop-instances executable. */
import { runCli } from './command.js';
import { stopInstancesCommand } from './powerInstances.js';

await runCli(stopInstancesCommand);
