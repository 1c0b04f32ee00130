/**
 * The CLC and the CC on `--store etcd` (issue 21), as real processes against a real three-member
 * etcd cluster: etcd on 127.0.82.21-23, the CLC on 127.0.82.40:19240, the CC on 127.0.82.41:19241.
 * Their stores live in etcd (nothing in the state directory), and a CLC killed with -9 reads the
 * same state back from etcd when it starts again.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';
import { builtEntry, spawnBuilt, type SpawnedProcess } from '../helpers/spawnDaemon.js';

const CLC = { host: '127.0.82.40', port: 19240 };
const CC = { host: '127.0.82.41', port: 19241 };
const PREFIX = 'it-ferry/';

describe.skipIf(!etcdInstalled())('CLC and CC on --store etcd (real 3-member etcd)', () => {
  let cluster: EtcdCluster;
  let etcd: Etcd3;
  let dir: string;
  const running: SpawnedProcess[] = [];

  const storeArgs = (): string[] => ['--store', 'etcd', '--etcd-endpoints', cluster.endpoints.join(','), '--etcd-prefix', PREFIX];

  async function startClc(store: readonly string[] = storeArgs(), stateDir = join(dir, 'clc')): Promise<SpawnedProcess> {
    const p = await spawnBuilt({
      script: builtEntry('clc/main.ts'), readyLine: /clc listening on (\S+)/, timeoutMs: 90_000,
      args: ['--host', CLC.host, '--port', String(CLC.port), '--state-dir', stateDir, '--auth', 'none', '--insecure-plaintext',
        '--clusters', `cluster01=http://${CC.host}:${CC.port}`, ...store],
    });
    running.push(p);
    return p;
  }

  async function query(action: string): Promise<{ status: number; text: string }> {
    const res = await fetch(`http://${CLC.host}:${CLC.port}/services/Eucalyptus`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `Action=${action}&Version=2013-02-01`,
    });
    return { status: res.status, text: await res.text() };
  }

  const value = async (key: string): Promise<string | null> => etcd.get(PREFIX + key).string();

  beforeAll(async () => {
    cluster = await startEtcdCluster({ addrs: ['127.0.82.21', '127.0.82.22', '127.0.82.23'], clientPort: 19221, peerPort: 19222 });
    etcd = cluster.client();
    dir = mkdtempSync(join(tmpdir(), 'ferry-etcd-backend-'));
  });

  afterAll(async () => {
    for (const p of running) await p.kill('SIGKILL');
    await cluster?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the CC keeps its view cache in etcd under cc/<partition>/view/', async () => {
    const cc = await spawnBuilt({
      script: builtEntry('cc/main.ts'), readyLine: /cc listening on (\S+)/, timeoutMs: 90_000,
      args: ['--host', CC.host, '--port', String(CC.port), '--state-dir', join(dir, 'cc'), '--insecure-plaintext', '--partition', 'cluster01', ...storeArgs()],
    });
    running.push(cc);
    expect(JSON.parse(await value('cc/cluster01/view/meta') ?? 'null')).toEqual({ schemaVersion: 1, kind: 'ferry-cc' });
    // Its first save (the registered nodes: none) names the partition; a change within a second is written.
    const end = Date.now() + 60_000;
    while (await value('cc/cluster01/view/f/partition') !== '"cluster01"') {
      if (Date.now() > end) throw new Error('the CC never wrote its view to etcd');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(existsSync(join(dir, 'cc', 'cc.json'))).toBe(false);
  });

  it('the CLC keeps clc.json, events.json and bmc.json in etcd, and a CLC killed with -9 reads them back', async () => {
    const first = await startClc();
    expect((await query('DescribeAvailabilityZones')).status).toBe(200);
    for (const key of ['clc/state', 'clc/events', 'clc/bmc']) expect(await value(`${key}/meta`)).not.toBeNull();
    // Made at the first start and kept (clc/state/pagingKey.ts): a reset store would make a new one.
    const pagingKey = await value('clc/state/f/pagingKey');
    expect(pagingKey).toMatch(/^"[0-9a-f]{64}"$/);
    expect(existsSync(join(dir, 'clc', 'clc.json'))).toBe(false);
    expect(existsSync(join(dir, 'clc', 'events.json'))).toBe(false);
    await first.kill('SIGKILL');
    const second = await startClc();
    expect(second.pid).not.toBe(first.pid);
    expect((await query('DescribeInstances')).status).toBe(200);
    expect(await value('clc/state/f/pagingKey')).toBe(pagingKey);
    await second.kill('SIGTERM');
  });

  it('the default is unchanged: without --store the CLC writes clc.json, events.json and bmc.json in its state dir, nothing in etcd', async () => {
    const stateDir = join(dir, 'clc-file');
    const before = (await etcd.getAll().prefix(PREFIX).keys()).length;
    const p = await startClc([], stateDir);
    expect((await query('DescribeAvailabilityZones')).status).toBe(200);
    for (const f of ['clc.json', 'events.json', 'bmc.json']) expect(existsSync(join(stateDir, f)), f).toBe(true);
    expect((await etcd.getAll().prefix(PREFIX).keys()).length).toBe(before);
    await p.kill('SIGTERM');
  });
});
