/**
 * One round of the host heartbeat, as data (STYLE habit 1): what to write to
 * `<storage>/<host>/heartbeat` and which per-VM activity links to create or remove there.
 *
 * A VM's activity signal is a symbolic link `<storage>/<host>/<name>.disk` to the VM's own disk
 * image on the same shared storage. A neighbour's activity check (nc/ha/activityCheck.ts) stats
 * it, which follows the link: the mtime it sees is that of QEMU's last write to the disk, not of
 * anything Ferry writes, so this second opinion still holds when the heartbeat process (or the NC)
 * is dead. Links are relative, so they resolve on every host whatever the mount point.
 */
import { isAbsolute, join, relative, sep } from 'node:path';
import type { DomainStatus } from './domainStatus.js';

export const HEARTBEAT_FILE = 'heartbeat';
export const ACTIVITY_SUFFIX = '.disk';

export interface BeatInput {
  /** This host's name on shared storage (its NC's address). */
  readonly host: string;
  /** The shared storage root every NC of the cluster mounts. */
  readonly storageDir: string;
  readonly now: number;
  /** Domains whose QEMU is alive now; undefined when they could not be read this round. */
  readonly domains: readonly DomainStatus[] | undefined;
  /** The activity links now in `<storage>/<host>/`: file name -> link target. */
  readonly links: ReadonlyMap<string, string>;
  readonly pid: number;
}

export interface BeatPlan {
  /** The heartbeat file's new contents (one JSON line). */
  readonly heartbeat: string;
  /** Links to (re)point: file name -> target, relative to the host directory. */
  readonly link: ReadonlyMap<string, string>;
  /** Link file names to remove (their domain no longer runs here). */
  readonly unlink: readonly string[];
}

export const hostDirOf = (storageDir: string, host: string): string => join(storageDir, host);

/** A domain name usable as a file name in the host directory (never a path, never hidden). */
export const isSafeName = (name: string): boolean => name.length > 0 && name.length <= 200 && !name.startsWith('.') && !name.includes('/') && !name.includes('\0');

/** The first of a domain's disks that lives on the shared storage, as a link target from the host directory. */
export function activityTarget(storageDir: string, hostDir: string, disks: readonly string[]): string | undefined {
  for (const disk of disks) {
    if (!isAbsolute(disk)) continue;
    const fromRoot = relative(storageDir, disk);
    if (fromRoot === '' || fromRoot.startsWith(`..${sep}`) || fromRoot === '..' || isAbsolute(fromRoot)) continue;
    return relative(hostDir, disk) || undefined;
  }
  return undefined;
}

export function planBeat(input: BeatInput): BeatPlan {
  const hostDir = hostDirOf(input.storageDir, input.host);
  const running = input.domains?.length ?? null;
  const heartbeat = `${JSON.stringify({ host: input.host, writtenAt: input.now, pid: input.pid, running })}\n`;
  if (input.domains === undefined) return { heartbeat, link: new Map(), unlink: [] }; // unknown: touch nothing
  const want = new Map<string, string>();
  for (const d of input.domains) {
    if (!isSafeName(d.name)) continue;
    const target = activityTarget(input.storageDir, hostDir, d.disks);
    if (target !== undefined) want.set(`${d.name}${ACTIVITY_SUFFIX}`, target);
  }
  const link = new Map([...want].filter(([name, target]) => input.links.get(name) !== target));
  const unlink = [...input.links.keys()].filter((name) => !want.has(name)).sort();
  return { heartbeat, link, unlink };
}
