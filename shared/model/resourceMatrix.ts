import { countFitting, sub, type Resources } from './resources.js';
import type { VmType } from './vmTypes.js';

/** What the matrix needs to know of one node. */
export interface NodeCapacityView {
  readonly capacity: Resources;
  /** Resources taken by instances and reservations on the node. */
  readonly used: Resources;
  /** Whether new instances may be placed here (enabled, reachable, not reserved). */
  readonly schedulable: boolean;
}

export interface MatrixRow {
  readonly vmType: string;
  /** Instances of this type the zone could hold if empty (euca-describe-availability-zones "max"). */
  readonly max: number;
  /** Instances of this type that can be started now ("free"). */
  readonly available: number;
  readonly cores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

/** The resource matrix as `euca-describe-availability-zones verbose` showed it, per VM type. */
export function resourceMatrix(nodes: readonly NodeCapacityView[], types: readonly VmType[]): MatrixRow[] {
  return types.map((t) => {
    let max = 0;
    let available = 0;
    for (const n of nodes) {
      max += countFitting(t, n.capacity);
      if (n.schedulable) available += countFitting(t, sub(n.capacity, n.used));
    }
    return { vmType: t.name, max, available, cores: t.cores, memoryMiB: t.memoryMiB, diskGiB: t.diskGiB };
  });
}
