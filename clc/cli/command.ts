/**
 * What every euca-* command shares: `--json`, `-U/--url`, the client from the environment, and one
 * way out (rows on stdout, warnings and failures on stderr, exit 0 or 1).
 */
import { Command } from 'commander';
import { describeFailure } from './failures.js';
import { clientOptionsFromEnv, QueryClient } from './queryClient.js';

export interface CommandOutput {
  /** What `--json` prints. */
  readonly json: unknown;
  /** What is printed otherwise, one row per line. */
  readonly lines: readonly string[];
  /** Printed on stderr either way (e.g. a partition that did not answer). */
  readonly warnings?: readonly string[];
}

export interface CommandContext {
  readonly client: QueryClient;
  readonly url: string;
  /** Positional arguments as commander processed them. */
  readonly args: readonly unknown[];
  readonly opts: Readonly<Record<string, unknown>>;
}

export interface CliCommand {
  readonly name: string;
  readonly description: string;
  /** Declares the command's own arguments and options. */
  configure(cmd: Command): Command;
  run(ctx: CommandContext): Promise<CommandOutput>;
}

export async function runCli(def: CliCommand, argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cmd = def.configure(
    new Command(def.name)
      .description(def.description)
      .option('--json', 'print the response as JSON')
      .option('-U, --url <url>', 'cloud controller URL (default: $EC2_URL, else http://127.0.0.1:8773/services/Eucalyptus)')
      .allowExcessArguments(false),
  );
  cmd.parse([...argv]);
  const opts = cmd.opts<Record<string, unknown>>();
  const clientOpts = clientOptionsFromEnv(env, typeof opts.url === 'string' ? opts.url : undefined);
  try {
    const out = await def.run({ client: new QueryClient(clientOpts), url: clientOpts.url, args: cmd.processedArgs, opts });
    for (const w of out.warnings ?? []) process.stderr.write(`${w}\n`);
    process.stdout.write(opts.json ? `${JSON.stringify(out.json, null, 2)}\n` : out.lines.map((l) => `${l}\n`).join(''));
  } catch (e) {
    const { line, exitCode } = describeFailure(e);
    process.stderr.write(`${line}\n`);
    process.exitCode = exitCode;
  }
}
