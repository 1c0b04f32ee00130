/** Resource accounting shared by the CC's scheduler, the NC's admission check and the CLC's matrix. */
export interface Resources {
  readonly cores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

export const ZERO: Resources = Object.freeze({ cores: 0, memoryMiB: 0, diskGiB: 0 });

export function add(a: Resources, b: Resources): Resources {
  return { cores: a.cores + b.cores, memoryMiB: a.memoryMiB + b.memoryMiB, diskGiB: a.diskGiB + b.diskGiB };
}

export function sub(a: Resources, b: Resources): Resources {
  return { cores: a.cores - b.cores, memoryMiB: a.memoryMiB - b.memoryMiB, diskGiB: a.diskGiB - b.diskGiB };
}

export function sum(list: readonly Resources[]): Resources {
  return list.reduce(add, ZERO);
}

export function fits(need: Resources, free: Resources): boolean {
  return need.cores <= free.cores && need.memoryMiB <= free.memoryMiB && need.diskGiB <= free.diskGiB;
}

/** How many of `unit` fit into `free` (0 when any dimension is short). */
export function countFitting(unit: Resources, free: Resources): number {
  const dims = [
    Math.floor(free.cores / unit.cores),
    Math.floor(free.memoryMiB / unit.memoryMiB),
    Math.floor(free.diskGiB / unit.diskGiB),
  ];
  return Math.max(0, Math.min(...dims));
}
