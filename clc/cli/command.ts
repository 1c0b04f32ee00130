/**
 * What every euca-* command shares: `--json`, `-U/--url`, the client from the environment, and one
 * way out (rows on stdout, warnings and failures on stderr, exit 0 or 1). Long-running commands
 * (`--wait`) also write as they go through `live`.
 */
import { Command } from 'commander';
import { describeFailure } from './failures.js';
import { resolveClient } from './clientCredentials.js';
import { DEFAULT_TIMEOUT_MS, QueryClient } from './queryClient.js';

export interface CommandOutput {
  /** What `--json` prints. */
  readonly json: unknown;
  /** What is printed otherwise, one row per line. */
  readonly lines: readonly string[];
  /** Printed on stderr either way (e.g. a partition that did not answer). */
  readonly warnings?: readonly string[];
  /** Non-zero when the command did its work but the outcome is a failure (e.g. a migration item did not complete). */
  readonly exitCode?: number;
}

/** Where a long-running command writes as it goes (stdout); rows of the final output still come from `lines`. */
export interface LiveOutput {
  write(s: string): void;
  /** A terminal: progress bars; otherwise one line per change. */
  readonly isTTY: boolean;
  /** The stream itself, for progress bars that redraw in place. */
  readonly stream: NodeJS.WritableStream;
}

export interface CommandContext {
  readonly client: QueryClient;
  readonly url: string;
  /** Positional arguments as commander processed them. */
  readonly args: readonly unknown[];
  readonly opts: Readonly<Record<string, unknown>>;
  readonly live: LiveOutput;
}

export interface CliCommand {
  readonly name: string;
  readonly description: string;
  /** Declares the command's own arguments and options. */
  configure(cmd: Command): Command;
  /** A usage problem commander cannot express (e.g. exactly one of two options); exits like commander's own. */
  validate?(opts: Readonly<Record<string, unknown>>, args: readonly unknown[]): string | undefined;
  run(ctx: CommandContext): Promise<CommandOutput>;
}

export async function runCli(def: CliCommand, argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cmd = def.configure(
    new Command(def.name)
      .description(def.description)
      .option('--json', 'print the response as JSON')
      .option('-U, --url <url>', 'cloud controller URL (default: $EC2_URL, else the credentials file\'s EC2_URL, else http://127.0.0.1:8773/services/Eucalyptus)')
      .option('--credentials <file>', 'eucarc-style file with EC2_ACCESS_KEY/EC2_SECRET_KEY, used when those are not in the environment (default: $FERRY_CREDENTIALS, else .ferry-demo/clc/admin.credentials in the repo)')
      .allowExcessArguments(false),
  );
  cmd.parse([...argv]);
  const opts = cmd.opts<Record<string, unknown>>();
  const problem = def.validate?.(opts, cmd.processedArgs);
  if (problem !== undefined) cmd.error(`error: ${problem}`);
  const live: LiveOutput = { write: (s) => process.stdout.write(s), isTTY: process.stdout.isTTY === true, stream: process.stdout };
  try {
    const resolved = await resolveClient(env, {
      ...(typeof opts.url === 'string' ? { url: opts.url } : {}),
      ...(typeof opts.credentials === 'string' ? { credentialsPath: opts.credentials } : {}),
    });
    const client = new QueryClient({ url: resolved.url, credentials: resolved.credentials, timeoutMs: DEFAULT_TIMEOUT_MS });
    const out = await def.run({ client, url: resolved.url, args: cmd.processedArgs, opts, live });
    for (const w of out.warnings ?? []) process.stderr.write(`${w}\n`);
    process.stdout.write(opts.json ? `${JSON.stringify(out.json, null, 2)}\n` : out.lines.map((l) => `${l}\n`).join(''));
    if (out.exitCode !== undefined && out.exitCode !== 0) process.exitCode = out.exitCode;
  } catch (e) {
    const { line, exitCode } = describeFailure(e);
    process.stderr.write(`${line}\n`);
    process.exitCode = exitCode;
  }
}
