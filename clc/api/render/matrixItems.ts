/** The resource matrix, both as structured rows and as `verbose` availability-zone rows. */
import { MATRIX_HEADER, matrixColumns, matrixLabel, type MatrixRowLike } from '../../core/matrixText.js';
import type { XmlObject } from '../xmlResponse.js';

export function matrixItems(rows: readonly MatrixRowLike[]): XmlObject[] {
  return rows.map((r) => ({ vmType: r.vmType, available: r.available, max: r.max, cores: r.cores, memoryMiB: r.memoryMiB, diskGiB: r.diskGiB }));
}

/** Eucalyptus's verbose zone listing: one header item and one item per VM type. */
export function verboseZoneItems(rows: readonly MatrixRowLike[]): XmlObject[] {
  return [
    { zoneName: MATRIX_HEADER.label, zoneState: MATRIX_HEADER.columns },
    ...rows.map((r) => ({ zoneName: matrixLabel(r), zoneState: matrixColumns(r) })),
  ];
}
