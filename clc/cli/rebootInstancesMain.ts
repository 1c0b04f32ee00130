/** The euca-reboot-instances executable. */
import { runCli } from './command.js';
import { rebootInstancesCommand } from './powerInstances.js';

await runCli(rebootInstancesCommand);
