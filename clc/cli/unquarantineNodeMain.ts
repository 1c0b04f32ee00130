/** The euca-unquarantine-node executable. */
import { runCli } from './command.js';
import { unquarantineNodeCommand } from './quarantineNode.js';

await runCli(unquarantineNodeCommand);
