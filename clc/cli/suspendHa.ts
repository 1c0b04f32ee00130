/** euca-suspend-ha (--host H | -c CLUSTER | -p PARTITION) [--until T | --minutes N] [--reason R]. */
import { runCli } from './command.js';
import { suspendCommand } from './suspendCommand.js';

await runCli(suspendCommand(true));
