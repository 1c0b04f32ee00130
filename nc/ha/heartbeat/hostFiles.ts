/**
 * Real adapters of the heartbeat's two interfaces: libvirt's status directory plus /proc (HostProbe),
 * and this host's directory on shared storage (BeatFiles). Writes go to a dot-named temp file and are
 * renamed over the target, so a reader never sees a half-written heartbeat and the activity check
 * (which ignores dot files) never counts a temp file as life.
 */
import { mkdir, readFile, readdir, readlink, rename, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../shared/store/durableFile.js';
import { ACTIVITY_SUFFIX, HEARTBEAT_FILE, hostDirOf } from './beatPlan.js';
import { parseDomainStatus, type DomainStatus } from './domainStatus.js';
import type { BeatFiles, HostProbe } from './heartbeatAgent.js';

const isMissing = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * A pid runs when /proc has it and it is not a zombie (orphans may be reaped late). A process reaped
 * between the open and the read of its stat file fails the read with ESRCH: that too is a process gone.
 */
export async function processAlive(pid: number, procDir = '/proc'): Promise<boolean> {
  try {
    const stat = await readFile(join(procDir, String(pid), 'stat'), 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

/**
 * `libvirtRunDir` is libvirtd's /run/libvirt (its QEMU driver keeps `qemu/<name>.xml` there). A file
 * is parsed again only when its mtime or size changed: parsing every status file every round cost
 * ~24 ms per round for 20 domains (docs/PERFORMANCE.md).
 */
export function libvirtStatusProbe(libvirtRunDir: string, procDir = '/proc'): HostProbe {
  const qemuDir = join(libvirtRunDir, 'qemu');
  const parsed = new Map<string, { readonly stamp: string; readonly status: DomainStatus | undefined }>();
  const read = async (path: string): Promise<DomainStatus | undefined> => {
    let st;
    try {
      st = await stat(path);
    } catch (e) {
      if (isMissing(e)) return undefined; // the domain stopped meanwhile
      throw e;
    }
    const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    const known = parsed.get(path);
    if (known?.stamp === stamp) return known.status;
    const xml = await readFile(path, 'utf8').catch((e: unknown) => {
      if (isMissing(e)) return undefined;
      throw e;
    });
    const status = xml === undefined ? undefined : parseDomainStatus(xml);
    parsed.set(path, { stamp, status });
    return status;
  };
  return {
    async runningDomains() {
      const paths = (await readdir(qemuDir)).filter((n) => n.endsWith('.xml')).map((n) => join(qemuDir, n));
      for (const p of parsed.keys()) if (!paths.includes(p)) parsed.delete(p);
      const out: DomainStatus[] = [];
      for (const path of paths) {
        const status = await read(path);
        if (status !== undefined && await processAlive(status.pid, procDir)) out.push(status);
      }
      return out;
    },
  };
}

export function sharedStorageFiles(storageDir: string, host: string): BeatFiles {
  const dir = hostDirOf(storageDir, host);
  const temp = (name: string): string => join(dir, `.${name}.${process.pid}.tmp`);
  return {
    async links() {
      const out = new Map<string, string>();
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (e) {
        if (isMissing(e)) return out;
        throw e;
      }
      for (const name of names.filter((n) => n.endsWith(ACTIVITY_SUFFIX) && !n.startsWith('.'))) {
        // A plain file (the simulated hypervisor's record) is not ours to manage: readlink fails with EINVAL.
        const target = await readlink(join(dir, name)).catch(() => undefined);
        if (target !== undefined) out.set(name, target);
      }
      return out;
    },
    async writeHeartbeat(contents) {
      await mkdir(dir, { recursive: true });
      await writeFileAtomic(join(dir, HEARTBEAT_FILE), contents);
    },
    async link(name, target) {
      await mkdir(dir, { recursive: true });
      await rm(temp(name), { force: true });
      await symlink(target, temp(name));
      await rename(temp(name), join(dir, name));
    },
    async unlink(name) {
      await rm(join(dir, name), { force: true });
    },
  };
}
