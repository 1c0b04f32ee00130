/**
 * Daemon flags from one table per daemon: [schema field, commander flag, env var, help]. Flags win
 * over the environment; the raw strings then go through compileConfig once. Shared so every daemon
 * names its flags, env vars and help the same way.
 */
import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { ConfigError } from './compileConfig.js';
import { unknownSettings } from './unknownSettings.js';

export type FlagField = readonly [field: string, flag: string, env: string, help: string];

/** Thrown for --help after the help was written: main exits 0. */
export class HelpShown extends Error {}

export interface ReadFlagsOptions {
  readonly name: string;
  readonly description: string;
  readonly fields: readonly FlagField[];
  /** Where --help goes. */
  readonly out?: (s: string) => void;
  /** The daemon's variables' prefix (FERRY_CLC_): a set variable with it that names no field is refused. */
  readonly envPrefix?: string;
}

/** Raw values by schema field, from argv (without node and script) then env; throws ConfigError or HelpShown. */
export function readFlags(o: ReadFlagsOptions, argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const program = new Command(o.name)
    .description(o.description)
    .exitOverride()
    .configureOutput({ writeOut: o.out ?? (() => {}), writeErr: () => {} })
    .allowExcessArguments(false);
  for (const [, flag, envName, help] of o.fields) program.option(flag, `${help} [env ${envName}]`);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.help')) throw new HelpShown();
    if (e instanceof CommanderError) throw new ConfigError([e.message.replace(/^error: /, '')]);
    throw e;
  }
  if (o.envPrefix !== undefined) {
    const unknown = unknownSettings(env, o.envPrefix, o.fields.map(([, , envName]) => envName));
    if (unknown.length > 0) throw new ConfigError(unknown);
  }
  const flags = program.opts<Record<string, string | undefined>>();
  const raw: Record<string, string | undefined> = {};
  for (const [key, , envName] of o.fields) {
    const v = flags[key] ?? env[envName];
    if (v !== undefined) raw[key] = v;
  }
  return raw;
}

/** Schema field → the flag an operator typed, for compileConfig's error messages. */
export function flagNames(fields: readonly FlagField[]): Readonly<Record<string, string>> {
  return Object.fromEntries(fields.map(([k, flag]) => [k, flag.split(' ')[0] ?? k]));
}

/** A whole-number flag with a default and bounds. */
export function intFlag(def: number, min: number, max: number) {
  return z.string().regex(/^\d+$/, 'must be a whole number').optional()
    .transform((v) => (v === undefined ? def : Number(v)))
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}
