/**
 * Helpers of the host-HA commands (command files run on import, these do not). A BMC password is
 * never a command-line argument (it would show in `ps` and shell history): it comes from a file
 * (`--password-file`, first line) or from an environment variable named by `--password-env`.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { UsageError } from './failures.js';

export function readBmcPassword(opts: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return readSecret({ file: opts.passwordFile, env: opts.passwordEnv, what: '--password' }, env);
}

/** A secret from a file (its first line) or an environment variable, never from an argument; undefined when neither is given. */
export async function readSecret(from: { readonly file: unknown; readonly env: unknown; readonly what: string }, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (typeof from.file === 'string') {
    const path = from.file;
    const text = await readFile(path, 'utf8').catch((e: unknown) => {
      throw new UsageError(`cannot read the ${from.what === '--password' ? 'password' : 'secret'} file ${path}: ${(e as Error).message}`);
    });
    return text.split(/\r?\n/)[0] ?? '';
  }
  if (typeof from.env === 'string') {
    const v = env[from.env];
    if (v === undefined) throw new UsageError(`the environment variable ${from.env} (${from.what}-env) is not set`);
    return v;
  }
  return undefined;
}

/** `--set NAME=VALUE` for ConfigureHAForCluster: `fenceTimeoutMs=45000` is sent as `FenceTimeoutMs=45000`. */
export function collectSetting(s: string, prev: Readonly<Record<string, string>> = {}): Record<string, string> {
  const eq = s.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected NAME=VALUE');
  const name = s.slice(0, eq);
  return { ...prev, [`${name.charAt(0).toUpperCase()}${name.slice(1)}`]: s.slice(eq + 1) };
}

/** Exactly one of the scope options is given, or a usage message. */
export function oneOf(opts: Readonly<Record<string, unknown>>, names: readonly string[], usage: string): string | undefined {
  return names.filter((n) => opts[n] !== undefined).length === 1 ? undefined : usage;
}
