/** What a finished drain must leave, checked against the hypervisors (the ground truth), for the failover tests. */
import { expect } from 'vitest';
import type { TestCloud } from './cloud.js';
import { arr, runningCopies } from './cloudApi.js';

/** `migration` (as DescribeMigrations shows it) completed with one completed item per instance, and each of `ids` runs exactly once, off `source`. */
export async function expectDrainedOnce(cloud: TestCloud, migration: any, ids: readonly string[], source: string): Promise<Map<string, string[]>> {
  expect(migration.state).toBe('completed');
  expect(arr<any>(migration.itemSet?.item).map((i) => i.state)).toEqual(ids.map(() => 'completed'));
  const copies = await runningCopies(cloud);
  for (const id of ids) {
    expect(copies.get(id), id).toHaveLength(1);
    expect(copies.get(id)?.[0]).not.toBe(source);
  }
  return copies;
}
