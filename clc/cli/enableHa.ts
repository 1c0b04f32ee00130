/** euca-enable-ha (HOST | -c PARTITION). */
import { runCli } from './command.js';
import { haSwitchCommand } from './haSwitchCommand.js';

await runCli(haSwitchCommand(true));
