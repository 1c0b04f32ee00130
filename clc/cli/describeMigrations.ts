/** euca-describe-migrations [ids...]: each migration's MIGRATION row, then one row per instance. */
import { listParams } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { unavailableWarnings } from './format.js';
import { migrationLines } from './migrationFormat.js';
import { readResponse } from './responses.js';

const describeMigrationsCommand: CliCommand = {
  name: 'euca-describe-migrations',
  description: 'List live migrations: state, and per instance destination, state, progress, elapsed, downtime, bytes moved, error',
  configure: (cmd) => cmd.argument('[ids...]', 'only these migrations (mig-XXXXXXXX)'),
  async run({ client, url, args }) {
    const params = listParams('MigrationId', (args[0] as string[] | undefined) ?? []);
    const r = readResponse('DescribeMigrations', await client.call('DescribeMigrations', params), url);
    return { json: r, lines: r.migrationSet.flatMap(migrationLines), warnings: unavailableWarnings(r.unavailablePartitionSet) };
  },
};

await runCli(describeMigrationsCommand);
