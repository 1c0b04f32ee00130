/** euca-cancel-migration <id>: rolls back what has not moved yet; prints the migration as it now stands. */
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { migrationLines } from './migrationFormat.js';
import { readResponse } from './responses.js';

const cancelMigrationCommand: CliCommand = {
  name: 'euca-cancel-migration',
  description: 'Cancel a live migration: instances not yet moved stay where they are',
  configure: (cmd) => cmd.argument('<id>', 'the migration (mig-XXXXXXXX)'),
  async run({ client, url, args }) {
    const r = readResponse('CancelMigration', await client.call('CancelMigration', { MigrationId: String(args[0]) }), url);
    return { json: r, lines: migrationLines(r) };
  },
};

await runCli(cancelMigrationCommand);
