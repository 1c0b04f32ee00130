/**
 * A daemon's environment variables double as its config file (deploy/config/*.conf, read by
 * systemd's EnvironmentFile= and podman's --env-file), so a misspelt key there would be silently
 * ignored. Every daemon refuses a variable with its own prefix that names none of its flags.
 */

/** Problems, one per unknown `PREFIX*` variable, naming it (for ConfigError); empty when all are known. */
export function unknownSettings(env: Readonly<Record<string, string | undefined>>, prefix: string, known: Iterable<string>): string[] {
  const names = new Set(known);
  return Object.keys(env)
    .filter((k) => k.startsWith(prefix) && env[k] !== undefined && !names.has(k))
    .sort()
    .map((k) => `${k}: is not a setting of this daemon (its variables start with ${prefix} and name a flag; see --help)`);
}
