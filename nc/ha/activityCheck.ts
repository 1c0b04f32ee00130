/**
 * The activity check a neighbour NC runs for a suspect host (host HA, issue 6), after CloudStack's
 * KVM approach over NFS: look at the suspect host's directory on shared storage, where its host
 * rewrites `heartbeat` and each running VM shows activity in `<id>.disk` (a simulated host writes both:
 * nc/hypervisor/sim/activityWriter.ts; a libvirt host runs ferry-heartbeat, whose `.disk` files are
 * links to the guests' own disks: nc/ha/heartbeat/),
 * and ask whether anything was written since the reference time (the suspect time first, then the
 * previous check). The verdict is pure; the directory listing sits behind a narrow interface.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ActivityOutcome } from '../../shared/model/activity.js';

export interface StorageEntry {
  readonly name: string;
  readonly mtimeMs: number;
}

export interface SharedStorageView {
  /** The files of `<storageDir>/<host>/`, or undefined when there is no such directory. */
  hostEntries(host: string): Promise<readonly StorageEntry[] | undefined>;
}

export interface ActivityVerdict {
  readonly outcome: ActivityOutcome;
  readonly detail: string;
  /** The newest write seen (epoch ms), if any. */
  readonly newestWriteAt: number | null;
}

/** The files that show life: the hypervisor's heartbeat and the VMs' disks (not temp files). */
const isSignal = (name: string): boolean => !name.startsWith('.') && (name === 'heartbeat' || name.endsWith('.disk'));

/**
 * Pure. `graceMs` widens "since" toward the past to absorb clock skew between hosts: a doubt then
 * reads as activity, which leads to a drain rather than a power action.
 */
export function judgeActivity(host: string, entries: readonly StorageEntry[] | undefined, since: number, graceMs = 0): ActivityVerdict {
  if (entries === undefined) return { outcome: 'unknown', detail: `no directory for ${host} on shared storage`, newestWriteAt: null };
  const signals = entries.filter((e) => isSignal(e.name));
  if (signals.length === 0) return { outcome: 'unknown', detail: `no heartbeat or disk file of ${host} on shared storage`, newestWriteAt: null };
  const newest = Math.max(...signals.map((e) => e.mtimeMs));
  const fresh = signals.filter((e) => e.mtimeMs > since - graceMs).map((e) => e.name).sort();
  if (fresh.length > 0) {
    return { outcome: 'active', detail: `${host} wrote ${fresh.join(', ')} since ${new Date(since).toISOString()}`, newestWriteAt: newest };
  }
  return {
    outcome: 'inactive',
    detail: `${host} wrote none of ${signals.length} file(s) since ${new Date(since).toISOString()} (last write ${new Date(newest).toISOString()})`,
    newestWriteAt: newest,
  };
}

/** Real files under the shared storage root every NC of the cluster mounts. */
export function fsSharedStorage(storageDir: string): SharedStorageView {
  return {
    async hostEntries(host) {
      const dir = join(storageDir, host);
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      const out: StorageEntry[] = [];
      for (const name of names) {
        try {
          out.push({ name, mtimeMs: (await stat(join(dir, name))).mtimeMs });
        } catch {
          // Replaced or removed meanwhile (writers rename temp files over targets).
        }
      }
      return out;
    },
  };
}

/** Looks and judges; a failed look is `unknown`, never `inactive`. */
export async function checkActivity(view: SharedStorageView, host: string, since: number, graceMs = 0): Promise<ActivityVerdict> {
  try {
    return judgeActivity(host, await view.hostEntries(host), since, graceMs);
  } catch (e) {
    return { outcome: 'unknown', detail: `could not read ${host}'s files on shared storage: ${(e as Error).message}`, newestWriteAt: null };
  }
}
