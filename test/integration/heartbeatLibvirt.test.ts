/**
 * ferry-heartbeat as a real process on a real libvirt host (scripts/libvirt-lab.sh): a Linux guest
 * whose disk sits on the shared directory and which writes it about once a second. The neighbour's
 * real activity check (nc/ha/activityCheck.ts) is the reader. What it shows: the heartbeat beats,
 * also with libvirtd killed; the VM's activity link shows QEMU's own writes, still after the heartbeat
 * process is killed; once QEMU is killed too nothing is fresh (a dead host reads as inactive); a
 * restarted heartbeat drops the link of the dead domain (known dead through /proc). If the lab cannot start on this machine the suite fails with its output.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkActivity, fsSharedStorage } from '../../nc/ha/activityCheck.js';
import { processAlive } from '../../nc/ha/heartbeat/hostFiles.js';
import { buildGuest, labLayout, startLab, stopLab, virsh } from '../helpers/libvirtLab.js';
import { builtEntry, spawnBuilt, type SpawnedProcess } from '../helpers/spawnDaemon.js';

const run = promisify(execFile);
const lab = labLayout('/tmp/ferry-lab-ha/beat', { addrs: ['127.0.56.1', '127.0.56.2'], port: 16509 });
const [H1] = lab.hosts;
const HOST = '127.0.56.1';
const STORAGE = join(lab.dir, 'shared');
const DISK = join(STORAGE, 'disks', 'i-beat.img');
const LINK = join(STORAGE, HOST, 'i-beat.disk');
const RUN_DIR = join(lab.dir, 'host1', 'run');
const procs: SpawnedProcess[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function heartbeat(): Promise<SpawnedProcess> {
  return spawnBuilt({
    script: builtEntry('nc/ha/heartbeat/main.ts'),
    args: ['--host', HOST, '--storage-dir', STORAGE, '--libvirt-run-dir', RUN_DIR, '--interval-ms', '500'],
    readyLine: /^heartbeat running for (\S+)/,
    timeoutMs: 30_000,
  }).then((p) => (procs.push(p), p));
}

const mtime = (p: string): number => statSync(p).mtimeMs;
const view = fsSharedStorage(STORAGE);

beforeAll(async () => {
  await startLab(lab);
  const guest = await buildGuest(lab);
  mkdirSync(join(STORAGE, 'disks'), { recursive: true });
  await writeFile(DISK, '');
  await truncate(DISK, 4 * 1024 * 1024);
  const xml = join(lab.dir, 'i-beat.xml');
  await writeFile(xml, `<domain type='qemu'><name>i-beat</name><memory unit='MiB'>128</memory><vcpu>1</vcpu>
<os><type arch='x86_64' machine='pc'>hvm</type><kernel>${guest.kernel}</kernel><initrd>${guest.initrd}</initrd><cmdline>console=ttyS0 quiet</cmdline></os>
<devices><disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='${DISK}'/><target dev='vda' bus='virtio'/></disk>
<serial type='file'><source path='${join(lab.dir, 'i-beat.serial')}'/></serial></devices></domain>`);
  await run('virsh', ['-q', '-c', H1.uri, 'create', xml], { timeout: 60_000 });
}, 600_000);

afterAll(async () => {
  for (const p of procs) await p.kill();
  await virsh(H1.uri, 'destroy', 'i-beat');
  await stopLab(lab);
}, 120_000);

describe('ferry-heartbeat on a libvirt host', () => {
  it('beats, and links the running guest to its disk on shared storage', async () => {
    const p = await heartbeat();
    expect(p.ready).toBe(HOST);
    const first = mtime(join(STORAGE, HOST, 'heartbeat'));
    await until('the heartbeat is rewritten', () => (mtime(join(STORAGE, HOST, 'heartbeat')) > first ? true : undefined));
    await until('the guest\'s activity link', () => (existsSync(LINK) ? true : undefined));
    expect(readlinkSync(LINK)).toBe('../disks/i-beat.img');
    const beat = JSON.parse(readFileSync(join(STORAGE, HOST, 'heartbeat'), 'utf8')) as { host: string; running: number; pid: number };
    expect(beat).toMatchObject({ host: HOST, running: 1, pid: p.pid });
  }, 120_000);

  it('with libvirtd killed (QEMU lives on), the heartbeat goes on and the guest keeps its link', async () => {
    const libvirtd = Number(readFileSync(join(RUN_DIR, 'libvirtd.pid'), 'utf8').trim());
    process.kill(libvirtd, 'SIGKILL');
    await until('libvirtd gone', async () => ((await processAlive(libvirtd)) ? undefined : true));
    const after = Date.now();
    await until('a heartbeat written after libvirtd died', () => (mtime(join(STORAGE, HOST, 'heartbeat')) > after ? true : undefined));
    expect(readlinkSync(LINK)).toBe('../disks/i-beat.img');
    const qemu = Number(readFileSync(join(RUN_DIR, 'qemu', 'i-beat.pid'), 'utf8').trim());
    expect(await processAlive(qemu)).toBe(true);
  }, 120_000);

  it('with the heartbeat process killed, the guest\'s own disk writes keep the host active', async () => {
    for (const p of procs) await p.kill('SIGKILL');
    const since = Date.now();
    const v = await until('a disk write by QEMU after the heartbeat died', async () => {
      const r = await checkActivity(view, HOST, since);
      return r.outcome === 'active' ? r : undefined;
    });
    expect(v.detail).toContain('i-beat.disk');
    expect(v.detail).not.toContain('heartbeat');
  }, 120_000);

  it('once QEMU is killed too, nothing written since reads inactive; a restarted heartbeat drops the dead guest\'s link', async () => {
    const pid = Number(readFileSync(join(RUN_DIR, 'qemu', 'i-beat.pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await until('QEMU gone', async () => ((await processAlive(pid)) ? undefined : true));
    const since = Date.now();
    const dead = await checkActivity(view, HOST, since);
    expect(dead.outcome).toBe('inactive');
    await heartbeat();
    await until('the dead guest\'s link removed', () => (existsSync(LINK) ? undefined : true));
    // Known dead through /proc, not through libvirt: the dead libvirtd left its status file behind.
    expect(existsSync(join(RUN_DIR, 'qemu', 'i-beat.xml'))).toBe(true);
    expect((await checkActivity(view, HOST, since)).outcome).toBe('active'); // the host itself lives: its heartbeat is back
  }, 120_000);

  it('stops on SIGTERM with exit code 0', async () => {
    const p = procs[procs.length - 1];
    expect(await p?.kill('SIGTERM')).toBe(0);
  }, 30_000);
});
