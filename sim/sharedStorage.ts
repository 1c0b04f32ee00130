/**
 * The cluster's shared storage as a neighbour NC's activity check reads it (nc/ha/activityCheck.ts
 * SharedStorageView), over the in-memory files every SimHost's ActivityWriter writes: the real check
 * and verdict run on the simulated mtimes.
 */
import type { SharedStorageView, StorageEntry } from '../nc/ha/activityCheck.js';
import type { MemoryDiskIo } from '../nc/hypervisor/sim/diskIo.js';

export function memorySharedStorage(disk: MemoryDiskIo, storageDir: string): SharedStorageView {
  return {
    hostEntries(host) {
      const dir = `${storageDir}/${host}/`;
      const out: StorageEntry[] = [];
      for (const [path, f] of disk.files) {
        if (path.startsWith(dir) && !path.slice(dir.length).includes('/')) out.push({ name: path.slice(dir.length), mtimeMs: f.mtimeMs });
      }
      return Promise.resolve(out.length > 0 ? out : undefined);
    },
  };
}
