/** Which partition takes a RunInstances that names none. Pure. */

export interface ZoneCapacity {
  readonly partition: string;
  /** Instances of the requested type that can start there now (the matrix's "free"). */
  readonly available: number;
}

/**
 * The zone with the most free slots among those that fit `minCount`, so load spreads across
 * partitions; ties go to the earlier zone in configuration order. Undefined when none fits.
 */
export function chooseZone(zones: readonly ZoneCapacity[], minCount: number): string | undefined {
  let best: ZoneCapacity | undefined;
  for (const z of zones) {
    if (z.available < minCount) continue;
    if (best === undefined || z.available > best.available) best = z;
  }
  return best?.partition;
}
