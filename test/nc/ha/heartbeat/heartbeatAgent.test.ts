/**
 * The heartbeat agent: rounds on the injected clock with fakes behind its two interfaces, then with
 * the real shared-storage adapter read back by the neighbour's real activity check.
 */
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkActivity, fsSharedStorage } from '../../../../nc/ha/activityCheck.js';
import { HeartbeatAgent, type BeatFiles, type HostProbe } from '../../../../nc/ha/heartbeat/heartbeatAgent.js';
import type { DomainStatus } from '../../../../nc/ha/heartbeat/domainStatus.js';
import { sharedStorageFiles } from '../../../../nc/ha/heartbeat/hostFiles.js';
import { ManualClock } from '../../../../shared/clock.js';
import { silentLogger } from '../../../../shared/log.js';

const H = '127.0.55.1';

class FakeFiles implements BeatFiles {
  readonly beats: string[] = [];
  readonly current = new Map<string, string>();
  failWrites = false;
  links = (): Promise<Map<string, string>> => Promise.resolve(new Map(this.current));
  writeHeartbeat = (s: string): Promise<void> => (this.failWrites ? Promise.reject(new Error('EIO')) : (this.beats.push(s), Promise.resolve()));
  link = (name: string, target: string): Promise<void> => (this.current.set(name, target), Promise.resolve());
  unlink = (name: string): Promise<void> => (this.current.delete(name), Promise.resolve());
}

class FakeProbe implements HostProbe {
  domains: DomainStatus[] | Error = [];
  runningDomains = (): Promise<DomainStatus[]> => (this.domains instanceof Error ? Promise.reject(this.domains) : Promise.resolve(this.domains));
}

/** Lets the agent's promise chain settle (it awaits fakes that resolve at once). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('HeartbeatAgent', () => {
  const make = (storageDir = '/s') => {
    const clock = new ManualClock(10_000);
    const probe = new FakeProbe();
    const files = new FakeFiles();
    const agent = new HeartbeatAgent({ host: H, storageDir, intervalMs: 1_000, pid: 9 }, clock, probe, files, silentLogger());
    return { clock, probe, files, agent };
  };

  it('beats at once, then every interval, with the clock time', async () => {
    const { clock, files, agent } = make();
    agent.start();
    await settle();
    expect(files.beats.map((b) => (JSON.parse(b) as { writtenAt: number }).writtenAt)).toEqual([10_000]);
    for (let i = 0; i < 3; i++) {
      clock.advance(1_000);
      await settle();
    }
    expect(files.beats.map((b) => (JSON.parse(b) as { writtenAt: number }).writtenAt)).toEqual([10_000, 11_000, 12_000, 13_000]);
    await agent.stop();
    clock.advance(5_000);
    await settle();
    expect(files.beats).toHaveLength(4);
  });

  it('keeps beating when the domains cannot be read, leaving the links alone', async () => {
    const { probe, files, agent } = make();
    files.current.set('i-1.disk', '../disks/i-1.img');
    probe.domains = new Error('EACCES');
    await agent.beat();
    expect(files.beats).toHaveLength(1);
    expect([...files.current]).toEqual([['i-1.disk', '../disks/i-1.img']]);
  });

  it('follows the domains: a link while one runs, none after it left', async () => {
    const { probe, files, agent } = make();
    probe.domains = [{ name: 'i-1', pid: 5, disks: ['/s/disks/i-1.img'] }];
    await agent.beat();
    expect([...files.current]).toEqual([['i-1.disk', `../disks/i-1.img`]]);
    probe.domains = [];
    await agent.beat();
    expect(files.current.size).toBe(0);
  });

  it('a failed heartbeat write is logged, not thrown, and the next round tries again', async () => {
    const { files, agent } = make();
    files.failWrites = true;
    await expect(agent.beat()).resolves.toBeUndefined();
    files.failWrites = false;
    await agent.beat();
    expect(files.beats).toHaveLength(1);
  });
});

describe('HeartbeatAgent on real files, read by the activity check', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the VM link carries the disk\'s own mtime: a guest writing keeps the host active after the heartbeat stopped', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-beat-'));
    const disk = join(dir, 'disks', 'i-1.img');
    await mkdir(join(dir, 'disks'));
    await writeFile(disk, 'x');
    const probe = new FakeProbe();
    probe.domains = [{ name: 'i-1', pid: 5, disks: [disk] }];
    const agent = new HeartbeatAgent({ host: H, storageDir: dir, intervalMs: 1_000, pid: 9 }, new ManualClock(0), probe, sharedStorageFiles(dir, H), silentLogger());
    await agent.beat();
    const view = fsSharedStorage(dir);
    const t0 = Date.now();
    // Age both signals: the heartbeat (a file) and the disk (through the link) read as old.
    const old = new Date(t0 - 60_000);
    await utimes(join(dir, H, 'heartbeat'), old, old);
    await utimes(disk, old, old);
    expect((await checkActivity(view, H, t0 - 30_000)).outcome).toBe('inactive');
    // QEMU writes the disk (the heartbeat process being dead): the neighbour sees it through the link.
    await writeFile(disk, 'y');
    const v = await checkActivity(view, H, t0 - 30_000);
    expect(v.outcome).toBe('active');
    expect(v.detail).toContain('i-1.disk');
    expect(v.detail).not.toContain('heartbeat');
  });

  it('writes no temp file that the activity check could count, and removes the link of a domain that left', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-beat-'));
    const files = sharedStorageFiles(dir, H);
    await files.link('i-1.disk', '../disks/i-1.img');
    await files.link('i-1.disk', '../disks/i-2.img');
    expect(await files.links()).toEqual(new Map([['i-1.disk', '../disks/i-2.img']]));
    await files.writeHeartbeat('{}\n');
    const entries = await fsSharedStorage(dir).hostEntries(H);
    expect(entries?.map((e) => e.name)).toEqual(['heartbeat']); // the dangling link is skipped, no temp left
    await files.unlink('i-1.disk');
    expect((await files.links()).size).toBe(0);
  });
});
