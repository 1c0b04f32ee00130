/** euca-confirm-host-fenced HOST. */
import { runCli } from './command.js';
import { fenceCommand } from './fenceCommand.js';

await runCli(fenceCommand('ConfirmHostFenced'));
