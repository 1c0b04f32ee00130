/** Plain code-unit order: the same in every process whatever its locale, as page cursors need. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
