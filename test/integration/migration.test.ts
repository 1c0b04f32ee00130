/**
 * Issue 3 end to end with real processes on 127.0.21.0/24 (4 hosts): drains under allow and deny
 * lists and concurrency limits with nothing over-committed, single-instance moves, cancel, and
 * SIGKILL of the CC, the source NC and the destination NC mid-handshake — every instance ends
 * running exactly once, checked against the hypervisor daemons themselves.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeNodes, placeOn as placeOnHost, runningCopies as copiesOn } from '../helpers/cloudApi.js';

// 256 MiB guests over a 1000 Mbit/s link take ~3 s of model time; time-scale 0.5 → ~1.5 s each.
const cloud = new TestCloud(21, 4, {
  simArgs: ['--time-scale', '0.5', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000', '--max-migrations-per-source', '2', '--max-migrations-per-destination', '1'],
});
const [n1, n2, n3, n4] = cloud.nodeHosts as [string, string, string, string];

const q = (params: Record<string, string>): Promise<any> => adminCall(cloud, params);
const nodes = (): Promise<any[]> => describeNodes(cloud);
const placeOn = (host: string, count: number): Promise<string[]> => placeOnHost(cloud, host, count);
const runningCopies = (): Promise<Map<string, string[]>> => copiesOn(cloud);

async function migration(id: string): Promise<any> {
  const r = await q({ Action: 'DescribeMigrations', 'MigrationId.1': id });
  return arr<any>(r.migrationSet?.item)[0];
}

async function waitFinal(id: string, timeoutMs = 60_000, sample?: (m: any) => void): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = await migration(id);
    sample?.(m);
    if (m && m.state !== 'active') return m;
    if (Date.now() > deadline) throw new Error(`migration ${id} still active: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function waitItemState(id: string, states: string[], timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = await migration(id);
    const item = arr<any>(m?.itemSet?.item).find((i) => states.includes(i.state));
    if (item) return item;
    if (Date.now() > deadline) throw new Error(`no item of ${id} reached ${states.join('/')}: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function expectEachRunningOnce(ids: readonly string[]): Promise<Map<string, string>> {
  const copies = await runningCopies();
  const at = new Map<string, string>();
  for (const id of ids) {
    expect(copies.get(id), `${id} runs on ${JSON.stringify(copies.get(id))}`).toHaveLength(1);
    at.set(id, copies.get(id)![0]!);
  }
  return at;
}

/** Regular files under `dir` (not under `skip`; sockets have no text) whose text contains `needle`, relative to `dir`. */
function filesContaining(dir: string, needle: string, skip: string): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        if (relative(dir, path) !== skip) walk(path);
      } else if (statSync(path).isFile() && statSync(path).size < 64 * 1024 * 1024 && readFileSync(path, 'latin1').includes(needle)) {
        hits.push(relative(dir, path));
      }
    }
  };
  walk(dir);
  return hits;
}

function expectNothingOvercommitted(list: any[]): void {
  for (const n of list) {
    for (const dim of ['cores', 'memoryMiB', 'diskGiB']) expect(Number(n.used[dim])).toBeLessThanOrEqual(Number(n.capacity[dim]));
  }
}

async function cleanSlate(): Promise<void> {
  // After a kill test the CC may still hold a restarted node's pre-crash view (NOTREADY): wait until
  // it has heard from every node, so the instance list is complete (see the note on issue 3).
  const until = Date.now() + 15_000;
  while ((await nodes()).some((n) => String(n.reachable) !== 'true') && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  const r = await q({ Action: 'DescribeInstances' });
  const ids = arr<any>(r.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item))
    .filter((i) => i.instanceState.name !== 'terminated').map((i) => i.instanceId as string);
  if (ids.length > 0) await q({ Action: 'TerminateInstances', ...Object.fromEntries(ids.map((id, k) => [`InstanceId.${k + 1}`, id])) });
  // Terminated means gone from every hypervisor, wherever the last migration left the VM.
  const deadline = Date.now() + 10_000;
  let left = await runningCopies();
  while (left.size > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    left = await runningCopies();
  }
  expect(Object.fromEntries(left), `still running after TerminateInstances of ${ids.join(',')}`).toEqual({});
}

beforeAll(async () => { await cloud.start(); });
afterAll(async () => { await cloud.destroy(); });

describe('live migration across real processes', () => {
  it('drains a node under an allow list and concurrency limits, over-committing nothing', async () => {
    const ids = await placeOn(n1, 4);
    const r = await q({ Action: 'MigrateInstances', SourceHost: n1, 'DestinationHost.1': n2, 'DestinationHost.2': n3, AllowHosts: 'true' });
    const id = r.migrationId as string;
    expect(id).toMatch(/^mig-[0-9a-f]{8}$/);
    let maxInFlightPerDest = 0;
    const done = await waitFinal(id, 60_000, (m) => {
      const inFlight = arr<any>(m?.itemSet?.item).filter((i) => ['preparing', 'ready', 'migrating'].includes(i.state));
      for (const d of [n2, n3]) maxInFlightPerDest = Math.max(maxInFlightPerDest, inFlight.filter((i) => i.destination === d).length);
    });
    expect(done.state).toBe('completed');
    expect(maxInFlightPerDest).toBeLessThanOrEqual(1);
    const at = await expectEachRunningOnce(ids);
    expect([...at.values()].every((h) => h === n2 || h === n3)).toBe(true);
    for (const item of arr<any>(done.itemSet.item)) expect(Number(item.stats.bytesTransferred)).toBeGreaterThan(0);
    expectNothingOvercommitted(await nodes());
    const n1Row = (await nodes()).find((n) => n.host === n1);
    expect(arr(n1Row.instancesSet?.item)).toHaveLength(0);
    // Every item went over mutual TLS with per-migration credentials, which no state file or log kept.
    const stored = JSON.parse(readFileSync(join(cloud.baseDir, 'hosts', n1, 'nc', 'nc.json'), 'utf8')) as unknown;
    const uris = JSON.stringify(stored).match(/"destinationUri":"[^"]*"/g) ?? [];
    expect(uris.length).toBeGreaterThanOrEqual(4);
    for (const u of uris) expect(u).toMatch(/"destinationUri":"https:\/\/127\.0\.21\.[23]:16514"/);
    expect(filesContaining(cloud.baseDir, 'PRIVATE KEY', 'certs')).toEqual([]);
  });

  it('honours a deny list', async () => {
    await cleanSlate();
    const ids = await placeOn(n2, 2);
    const r = await q({ Action: 'MigrateInstances', SourceHost: n2, 'DestinationHost.1': n1, 'DestinationHost.2': n3, AllowHosts: 'false' });
    expect((await waitFinal(r.migrationId)).state).toBe('completed');
    const at = await expectEachRunningOnce(ids);
    expect([...at.values()]).toEqual([n4, n4]);
  });

  it('refuses a second drain of a node already draining, changing nothing', async () => {
    await cleanSlate();
    await placeOn(n1, 2);
    const first = await q({ Action: 'MigrateInstances', SourceHost: n1 });
    const second = await cloud.query({ Action: 'MigrateInstances', SourceHost: n1 });
    expect(second.status).toBeGreaterThanOrEqual(400);
    expect(second.text).toMatch(/<Code>[A-Za-z.]*MigrationInProgress[A-Za-z.]*<\/Code>/);
    expect((await waitFinal(first.migrationId)).state).toBe('completed');
  });

  it('cancels what has not committed and leaves those instances running on the source', async () => {
    await cleanSlate();
    const ids = await placeOn(n3, 4);
    const r = await q({ Action: 'MigrateInstances', SourceHost: n3, 'DestinationHost.1': n4, AllowHosts: 'true' });
    await q({ Action: 'CancelMigration', MigrationId: r.migrationId });
    const done = await waitFinal(r.migrationId);
    expect(done.state).toBe('incomplete');
    const items = arr<any>(done.itemSet.item);
    expect(items.some((i) => i.state === 'cancelled')).toBe(true);
    const at = await expectEachRunningOnce(ids);
    for (const i of items) expect(at.get(i.instanceId)).toBe(i.state === 'completed' ? n4 : n3);
    expectNothingOvercommitted(await nodes());
  });

  it.each([
    ['the CC', () => 'cc'],
    ['the source NC', (src: string) => `nc-${src}`],
    ['the destination NC', (_src: string, dst: string) => `nc-${dst}`],
  ])('survives SIGKILL of %s while an instance migrates: it ends running exactly once', async (_who, victim) => {
    await cleanSlate();
    const [id] = await placeOn(n1, 1);
    const r = await q({ Action: 'MigrateInstances', InstanceId: id!, 'DestinationHost.1': n2, AllowHosts: 'true' });
    await waitItemState(r.migrationId, ['migrating']);
    await cloud.restart(victim(n1, n2));
    const done = await waitFinal(r.migrationId, 90_000);
    const item = arr<any>(done.itemSet.item)[0];
    expect(['completed', 'rolled-back']).toContain(item.state);
    const at = await expectEachRunningOnce([id!]);
    expect(at.get(id!)).toBe(item.state === 'completed' ? n2 : n1);
    expectNothingOvercommitted(await nodes());
  });

  it.each([
    ['the CC', () => 'cc'],
    ['the source NC', (src: string) => `nc-${src}`],
    ['the destination NC', (_src: string, dst: string) => `nc-${dst}`],
  ])('survives SIGKILL of %s mid-drain (one item migrating, the rest planned and queued): every instance ends running once', async (_who, victim) => {
    await cleanSlate();
    // n4 has only seen clean migrations so far: no record left over from the kill tests above.
    const ids = await placeOn(n4, 3);
    // One destination taking one migration at a time: the source holds a plan with queued items.
    const r = await q({ Action: 'MigrateInstances', SourceHost: n4, 'DestinationHost.1': n3, AllowHosts: 'true' });
    await waitItemState(r.migrationId, ['migrating']);
    const m = await migration(r.migrationId);
    expect(arr<any>(m.itemSet.item).filter((i) => i.state === 'queued').length).toBeGreaterThan(0);
    await cloud.restart(victim(n4, n3));
    const done = await waitFinal(r.migrationId, 120_000);
    const items = arr<any>(done.itemSet.item);
    expect(items.map((i) => i.instanceId).sort(), 'the drain moved exactly the instances placed on the source').toEqual([...ids].sort());
    const at = await expectEachRunningOnce(ids);
    for (const i of items) {
      expect(['completed', 'rolled-back'], JSON.stringify(i)).toContain(i.state);
      expect(at.get(i.instanceId), JSON.stringify({ item: i, ids })).toBe(i.state === 'completed' ? n3 : n4);
    }
    // A restart is a pause, not a failure: every item still completes.
    expect(items.map((i) => i.state)).toEqual(['completed', 'completed', 'completed']);
    expectNothingOvercommitted(await nodes());
  });

  it('rolls back when the destination host dies mid-migration, the VM still running on the source', async () => {
    await cleanSlate();
    const [id] = await placeOn(n3, 1);
    const r = await q({ Action: 'MigrateInstances', InstanceId: id!, 'DestinationHost.1': n4, AllowHosts: 'true' });
    await waitItemState(r.migrationId, ['migrating']);
    await cloud.restart(`simhv-${n4}`);
    const done = await waitFinal(r.migrationId, 90_000);
    expect(arr<any>(done.itemSet.item)[0].state).not.toBe('completed');
    const at = await expectEachRunningOnce([id!]);
    expect(at.get(id!)).toBe(n3);
  });
});
