/** euca-resume-ha (--host H | -c CLUSTER | -p PARTITION). */
import { runCli } from './command.js';
import { suspendCommand } from './suspendCommand.js';

await runCli(suspendCommand(false));
