/**
 * Validate configuration once, at start (STYLE habit 7): raw flags/env → a frozen, typed config, or
 * one error naming every bad field. Entry points print it and exit 2.
 */
import type { z } from 'zod';
import { FerryError } from '../errors/registry.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function compileConfig<S extends z.ZodType>(schema: S, raw: unknown, flagNames: Readonly<Record<string, string>> = {}): Readonly<z.infer<S>> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    throw new ConfigError(r.error.issues.map((i) => {
      const key = i.path.join('.');
      return `${flagNames[key] ?? key}: ${i.message}`;
    }));
  }
  return Object.freeze(r.data) as Readonly<z.infer<S>>;
}

/** Runs a daemon's main, turning a ConfigError into a message and exit code 2. */
export async function runMain(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    // A coded error (a corrupt store, say) is the operator's to read: code and message first.
    const coded = e instanceof FerryError ? `${e.code}: ${e.message}\n` : '';
    process.stderr.write(`fatal: ${coded}${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  }
}

/** True for an IPv4 literal in 127.0.0.0/8: Ferry's daemons and tests stay on loopback. */
export function isLoopbackV4(addr: string): boolean {
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}
