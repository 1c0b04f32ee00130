/** The euca-quarantine-node executable. */
import { runCli } from './command.js';
import { quarantineNodeCommand } from './quarantineNode.js';

await runCli(quarantineNodeCommand);
