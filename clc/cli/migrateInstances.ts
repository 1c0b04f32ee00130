/**
 * euca-migrate-instances (-s SOURCE | -i INSTANCE) [--include-dest HOST... | --exclude-dest HOST...]
 *   [--reserve-destinations] [--partial] [--wait [--poll-ms MS]]
 * Prints the MIGRATION row and one row per instance; with --wait follows the migration to its end
 * (progress bars on a terminal, a row per state change otherwise) and exits 1 unless every
 * instance completed.
 */
import { Option } from 'commander';
import { listParams, parsePollMs } from './args.js';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { migrateLines, migrationLine } from './migrationFormat.js';
import { watchMigration } from './migrationWatch.js';
import { barDisplay, lineDisplay, type ProgressDisplay } from './progressDisplay.js';

export const DEFAULT_POLL_MS = 1000;

const migrateInstancesCommand: CliCommand = {
  name: 'euca-migrate-instances',
  description: 'Live-migrate every running instance off a node (-s), or one instance (-i)',
  configure: (cmd) => cmd
    .addOption(new Option('-s, --source <host>', 'drain this node: migrate its running instances').conflicts('instance'))
    .addOption(new Option('-i, --instance <id>', 'migrate this instance'))
    .addOption(new Option('--include-dest <host...>', 'only these nodes may take the instances (disabled ones included)').conflicts('excludeDest'))
    .option('--exclude-dest <host...>', 'these nodes may not take the instances')
    .option('--reserve-destinations', 'hold the chosen destinations: no new instances start there until the migration ends')
    .option('--partial', 'migrate what fits when not everything does (default: all or nothing)')
    .option('--wait', 'follow the migration until every instance is done; exit 1 if any did not complete')
    .option('--poll-ms <ms>', `with --wait, the longest wait between two asks (${DEFAULT_POLL_MS}; sooner while the migration is young)`, parsePollMs),
  validate: (opts) => ((opts.source === undefined) === (opts.instance === undefined) ? 'give exactly one of -s SOURCE and -i INSTANCE' : undefined),
  async run({ client, url, opts, live }) {
    const params: Record<string, string> = {};
    if (typeof opts.source === 'string') params.SourceHost = opts.source;
    if (typeof opts.instance === 'string') params.InstanceId = opts.instance;
    const include = opts.includeDest as string[] | undefined;
    const exclude = opts.excludeDest as string[] | undefined;
    const hosts = include ?? exclude ?? [];
    if (hosts.length > 0) Object.assign(params, listParams('DestinationHost', hosts), { AllowHosts: include ? 'true' : 'false' });
    if (opts.reserveDestinations === true) params.ReserveDestinations = 'true';
    if (opts.partial === true) params.Partial = 'true';

    const answer = client.call('MigrateInstances', params);
    answer.catch(() => undefined); // awaited below; not an unhandled rejection while the schemas load
    // zod and the response schemas (~100 ms of this command's start) load while the CLC plans the migration.
    const { readResponse } = await import('./responses.js');
    const r = readResponse('MigrateInstances', await answer, url);
    if (opts.wait !== true) return { json: r, lines: migrateLines(r) };

    let display: ProgressDisplay = { show: () => {}, stop: () => {} };
    if (opts.json !== true) {
      live.write(migrateLines(r).map((l) => `${l}\n`).join(''));
      display = live.isTTY ? await barDisplay(live.stream, r) : lineDisplay((s) => live.write(s), r);
    }
    const final = await watchMigration({
      client, url, migrationId: r.migrationId, pollMs: (opts.pollMs as number | undefined) ?? DEFAULT_POLL_MS, display,
    });
    return { json: final, lines: [migrationLine(final)], exitCode: final.state === 'completed' ? 0 : 1 };
  },
};

await runCli(migrateInstancesCommand);
