/**
 * Where the simulated hypervisor's control API listens: a Unix socket only its owner can open, as
 * libvirtd's /var/run/libvirt/libvirt-sock for qemu:///system (root on a real host). Whoever can
 * connect can create, destroy and migrate domains, so the file's permissions are the access check:
 * the socket is born 0600 (umask during bind, no window), sits in a directory others cannot write to
 * (they could swap it for their own), and one left behind by a crash is replaced only when nothing
 * answers on it. Both ends check the socket's owner: the daemon its directory, the driver the file.
 */
import { chmod, lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { connect, type Server } from 'node:net';
import { dirname } from 'node:path';
import type { Stats } from 'node:fs';
import type { FerryError } from '../../../shared/errors/registry.js';
import { HypervisorErrors } from '../errors.js';

/** Owner read and write only: connect(2) on a Unix socket needs write permission on its file. */
export const SOCKET_MODE = 0o600;

const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/** Whose socket or directory the driver and daemon accept: their own user's, or root's. */
export function trustedOwner(uid: number): boolean {
  return uid === 0 || uid === process.getuid?.();
}

/** Why `dir` cannot safely hold the socket, or undefined: writable by others (without sticky bit) or owned by a stranger. */
export function directoryProblem(dir: string, s: Pick<Stats, 'mode' | 'uid' | 'isDirectory'>): string | undefined {
  if (!s.isDirectory()) return `${dir} is not a directory`;
  if (!trustedOwner(s.uid)) return `its directory ${dir} belongs to uid ${s.uid}, who could replace the socket`;
  // A sticky world-writable directory (/tmp) keeps others from removing our file; any other writable one does not.
  if ((s.mode & 0o022) !== 0 && (s.mode & 0o1000) === 0) {
    return `its directory ${dir} is writable by group or others (mode ${octal(s.mode)}), who could replace the socket`;
  }
  return undefined;
}

/**
 * Binds `server` to `path` with mode 0600. Throws HypervisorSocketUnusable (nothing bound, nothing
 * removed but a stale socket of ours) when the directory is unsafe, the path holds something else,
 * or another process already listens there.
 */
export async function listenOnControlSocket(server: Server, path: string): Promise<void> {
  const unusable = (detail: string): FerryError => HypervisorErrors.make('HypervisorSocketUnusable', { path, detail });
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw unusable(`cannot create its directory: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const problem = directoryProblem(dir, await stat(dir));
  if (problem) throw unusable(problem);
  await removeStale(path, unusable);
  await bindOwnerOnly(server, path).catch((e: unknown) => {
    throw unusable(`cannot listen: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  });
  // Belt and braces: the umask already made it 0600; check what the file system really says.
  await chmod(path, SOCKET_MODE);
  const s = await lstat(path);
  if (!s.isSocket() || (s.mode & 0o777) !== SOCKET_MODE) {
    server.close();
    throw unusable(`it came out as mode ${octal(s.mode)}, not ${octal(SOCKET_MODE)}`);
  }
}

/** The bind happens inside listen(), synchronously: the umask covers exactly it. */
function bindOwnerOnly(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const previous = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
}

async function removeStale(path: string, unusable: (detail: string) => FerryError): Promise<void> {
  let s: Stats;
  try {
    s = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw unusable(`cannot inspect it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!s.isSocket()) throw unusable('it exists and is not a socket; left as it is');
  if (!trustedOwner(s.uid)) throw unusable(`a socket of uid ${s.uid} is there; left as it is`);
  if (await answers(path)) throw unusable('another process listens on it (a second simhv for this host?)');
  await unlink(path); // left by a daemon that was killed: nobody answers on it
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    // Accepted but silent: someone is there all the same; never remove a live process's socket.
    probe.setTimeout(2_000, () => {
      resolve(true);
      probe.destroy();
    });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
    probe.once('close', () => resolve(false));
  });
}
