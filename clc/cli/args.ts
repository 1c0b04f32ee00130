/** Argument parsers the commands share with their tests (command files run on import, these do not). */
import { InvalidArgumentError } from 'commander';

/** `-n 3` starts exactly three; `-n 2:5` at least two and up to five (euca2ools' syntax). */
export function parseCount(s: string): { min: string; max: string } {
  // MIN-MAX is euca2ools' form, MIN:MAX Ferry's first one; both are taken.
  const m = /^(\d+)(?:[:-](\d+))?$/.exec(s);
  if (!m) throw new InvalidArgumentError('expected MIN, MIN-MAX or MIN:MAX');
  return { min: m[1] as string, max: m[2] ?? (m[1] as string) };
}

/** Collects repeated `--filter name=value`; values of one name become that filter's Value.N. */
export function collectFilter(s: string, prev: ReadonlyMap<string, string[]> = new Map()): Map<string, string[]> {
  const eq = s.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('expected name=value');
  const next = new Map([...prev].map(([k, v]) => [k, [...v]]));
  const name = s.slice(0, eq);
  next.set(name, [...(next.get(name) ?? []), s.slice(eq + 1)]);
  return next;
}

/** Filters as AWS's flattened parameters: Filter.N.Name, Filter.N.Value.M. */
export function filterParams(filters: ReadonlyMap<string, readonly string[]>): Record<string, string> {
  const params: Record<string, string> = {};
  [...filters].forEach(([name, values], i) => {
    params[`Filter.${i + 1}.Name`] = name;
    values.forEach((v, j) => { params[`Filter.${i + 1}.Value.${j + 1}`] = v; });
  });
  return params;
}

/** `Name.1=a&Name.2=b` for a list. */
export function listParams(name: string, values: readonly string[]): Record<string, string> {
  return Object.fromEntries(values.map((v, i) => [`${name}.${i + 1}`, v]));
}

/** A poll interval in milliseconds, at least 10 so a typo cannot hammer the cloud controller. */
export function parsePollMs(s: string): number {
  if (!/^\d{1,7}$/.test(s) || Number(s) < 10) throw new InvalidArgumentError('expected milliseconds, at least 10');
  return Number(s);
}
