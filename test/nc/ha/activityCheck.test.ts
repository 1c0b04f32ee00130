/** The neighbour's activity check (nc/ha/activityCheck.ts): the pure verdict, and real files on a shared directory. */
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkActivity, fsSharedStorage, judgeActivity, type SharedStorageView, type StorageEntry } from '../../../nc/ha/activityCheck.js';
import { fsDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { diskPath, heartbeatPath } from '../../../nc/hypervisor/sim/hostLedger.js';

const H = '127.0.1.2';
const e = (name: string, mtimeMs: number): StorageEntry => ({ name, mtimeMs });

describe('judgeActivity', () => {
  const rows: [string, StorageEntry[] | undefined, number, number, string][] = [
    ['no directory: cannot tell', undefined, 100, 0, 'unknown'],
    ['an empty directory: cannot tell', [], 100, 0, 'unknown'],
    ['only temp files: cannot tell', [e('.i-1.disk.77.0.tmp', 500)], 100, 0, 'unknown'],
    ['a heartbeat since: active', [e('heartbeat', 150), e('i-00000001.disk', 50)], 100, 0, 'active'],
    ['only paused guests (their disks frozen, issue 18) but the heartbeat goes on: active', [e('heartbeat', 150), e('i-00000001.disk', 20), e('i-00000002.disk', 30)], 100, 0, 'active'],
    ['a VM disk since (the hypervisor heartbeat stopped): active', [e('heartbeat', 50), e('i-00000001.disk', 101)], 100, 0, 'active'],
    ['nothing written since: inactive', [e('heartbeat', 99), e('i-00000001.disk', 90), e('i-00000002.disk', 100)], 100, 0, 'inactive'],
    ['a write at exactly "since" is not after it: inactive', [e('heartbeat', 100)], 100, 0, 'inactive'],
    ['within the skew grace: active (a doubt leads to a drain, not a power action)', [e('heartbeat', 95)], 100, 10, 'active'],
    ['other files do not count', [e('notes.txt', 500), e('heartbeat', 10)], 100, 0, 'inactive'],
  ];
  it.each(rows)('%s', (_name, entries, since, grace, want) => {
    const v = judgeActivity(H, entries, since, grace);
    expect(v.outcome).toBe(want);
    expect(v.detail).toContain(H);
  });

  it('names what was written and when the last write was', () => {
    expect(judgeActivity(H, [e('heartbeat', 150), e('i-00000001.disk', 160)], 100)).toMatchObject({
      detail: expect.stringContaining('heartbeat, i-00000001.disk'), newestWriteAt: 160,
    });
    expect(judgeActivity(H, [e('heartbeat', 50)], 100).detail).toContain('last write 1970-01-01T00:00:00.050Z');
  });
});

describe('checkActivity on real files', () => {
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-shared-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it("reads what the simulated hypervisor writes, first against the suspect time, then between checks", async () => {
    const io = fsDiskIo();
    await io.write(heartbeatPath(dir, H), '1\n');
    await io.write(diskPath(dir, H, 'i-00000001'), 'x\n');
    const t0 = 1_700_000_000_000;
    await utimes(heartbeatPath(dir, H), t0 / 1000, t0 / 1000);
    await utimes(diskPath(dir, H, 'i-00000001'), (t0 + 5000) / 1000, (t0 + 5000) / 1000);
    const view = fsSharedStorage(dir);
    const suspectAt = t0 + 1000;
    expect((await checkActivity(view, H, suspectAt)).outcome).toBe('active');
    // The next check looks only at writes after the previous one.
    expect((await checkActivity(view, H, t0 + 6000)).outcome).toBe('inactive');
    expect((await checkActivity(view, '127.0.1.9', suspectAt)).outcome).toBe('unknown');
  });

  it('a look that fails is unknown, never inactive', async () => {
    const broken: SharedStorageView = { hostEntries: () => Promise.reject(new Error('EIO: stale NFS handle')) };
    expect(await checkActivity(broken, H, 0)).toMatchObject({ outcome: 'unknown', detail: expect.stringContaining('stale NFS handle') });
  });

  it('lists the files of the host directory with their mtimes', async () => {
    await mkdir(join(dir, H), { recursive: true });
    await writeFile(join(dir, H, 'heartbeat'), '1');
    const entries = await fsSharedStorage(dir).hostEntries(H);
    expect(entries?.map((x) => x.name)).toEqual(['heartbeat']);
    expect(entries?.[0]?.mtimeMs).toBeGreaterThan(0);
  });
});
