/**
 * The resource matrix as `euca-describe-availability-zones verbose` printed it, one line per VM
 * type: `|- m1.small  0040 / 0040  1  256  5`. Shared by the API (zone rows) and the CLI.
 */

export interface MatrixRowLike {
  readonly vmType: string;
  readonly available: number;
  readonly max: number;
  readonly cores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

export const MATRIX_HEADER = Object.freeze({ label: '|- vm types', columns: 'free / max\tcpu\tram\tdisk' });

/** Eucalyptus printed counts as %04d. */
function count(n: number): string {
  return String(Math.max(0, n)).padStart(4, '0');
}

export function matrixLabel(row: MatrixRowLike): string {
  return `|- ${row.vmType}`;
}

export function matrixColumns(row: MatrixRowLike): string {
  return `${count(row.available)} / ${count(row.max)}\t${row.cores}\t${row.memoryMiB}\t${row.diskGiB}`;
}
