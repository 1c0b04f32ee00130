/** Runs a filter table (name, filters, what they select) as tests, and checks every filter name has a row. */
import { expect, it } from 'vitest';

export type FilterRow<F> = [string, F[], string[]];

export function filterTableTests<F extends { readonly name: string }>(rows: readonly FilterRow<F>[], select: (filters: F[]) => string[], names: readonly string[]): void {
  it.each(rows)('%s', (_n, filters, expected) => {
    expect(select(filters)).toEqual(expected);
  });

  it('every filter name has a row above', () => {
    const used = new Set(rows.flatMap(([, f]) => f.map((x) => x.name)));
    expect(names.filter((n) => !used.has(n))).toEqual([]);
  });
}
