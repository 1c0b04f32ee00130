/** The euca-pause-instances executable. */
import { runCli } from './command.js';
import { pauseInstancesCommand } from './pauseInstances.js';

await runCli(pauseInstancesCommand);
