/**
 * The etcd layout at thousands of hosts (issues 19 and 21), against a real one-member etcd on
 * 127.0.108.1:20250 with etcd's default limits (--max-txn-ops 128, --max-request-bytes 1.5 MiB): the
 * CLC's state with 3,000 host HA records, 200 instance records and a CC's view of 2,000 nodes are
 * each created in one update, saved again and read back; one host's HA record and a view "seen again" write a few small keys; a
 * store written with `ha` as one key still reads, and its first write moves the hosts out; a deposed
 * leader's later chunk is refused, what it wrote reads as a valid state, and the next leader finishes.
 */
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLC_STORE_SPEC } from '../../clc/state/clcStore.js';
import { newHostHaRecord } from '../../clc/ha/hostHaState.js';
import { viewStoreSpec, type ViewSnapshot } from '../../cc/viewCache.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';
import { systemClock } from '../../shared/clock.js';
import { connectEtcd } from '../../shared/store/etcdClient.js';
import { openEtcdStore, type EtcdStore, type WriteFence } from '../../shared/store/etcdStore.js';
import type { StoreSpec } from '../../shared/store/storeBackend.js';
import { codeOf } from '../helpers/codeOf.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';

const HOSTS = 3000;
const NODES = 2000;
const T0 = 1_790_000_000_000;

const hostName = (i: number): string => `10.${Math.floor(i / 250)}.${i % 250}.1`;

function node(i: number, lastSeen: number): CcNode {
  return {
    host: `127.1.${Math.floor(i / 250)}.${i % 250}`, partition: 'cluster01', nodeState: 'enabled', reachable: true, healthy: true, lastSeen,
    capacity: { cores: 32, memoryMiB: 262144, diskGiB: 2000 }, used: { cores: 4, memoryMiB: 8192, diskGiB: 40 },
    instances: [], uri: `https://127.1.${Math.floor(i / 250)}.${i % 250}:8775/axis2/services/EucalyptusNC`,
  };
}

/**
 * `base` whose second txn commit first runs `before` (which may throw, as a lost connection): the
 * event happens between two txns of a split change, always, whatever the machine's speed.
 */
function onSecondCommit(base: Etcd3, before: () => Promise<void>): { client: Etcd3; commits: () => number } {
  let commits = 0;
  const client = new Proxy(base, {
    get(target, p, recv) {
      const v = Reflect.get(target, p, recv) as unknown;
      if (p !== 'if' || typeof v !== 'function') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      return (...args: unknown[]) => {
        const txn = (v as (...a: unknown[]) => { commit(): Promise<unknown> }).apply(target, args);
        const commit = txn.commit.bind(txn);
        txn.commit = async () => {
          if (++commits === 2) await before();
          return commit();
        };
        return txn;
      };
    },
  });
  return { client, commits: () => commits };
}

describe.skipIf(!etcdInstalled())('the etcd layout at thousands of hosts (real etcd, default limits)', () => {
  let cluster: EtcdCluster;
  let raw: Etcd3;
  const clients: Etcd3[] = [];
  const stores: EtcdStore<unknown>[] = [];

  async function open<T>(spec: StoreSpec<T>, prefix: string, extra: { fence?: WriteFence; client?: Etcd3 } = {}): Promise<EtcdStore<T>> {
    const client = extra.client ?? connectEtcd({ endpoints: cluster.endpoints, callTimeoutMs: 20_000 });
    clients.push(client);
    const s = await openEtcdStore<T>({
      client, prefix, options: spec.options, clock: systemClock, timeoutMs: 20_000,
      ...(spec.layout !== undefined ? { layout: spec.layout } : {}),
      ...(extra.fence !== undefined ? { fence: extra.fence } : {}),
    });
    stores.push(s as EtcdStore<unknown>);
    return s;
  }

  /** Mod revision of every key under `prefix`. */
  async function modRevisions(prefix: string): Promise<Map<string, string>> {
    const got = await raw.getAll().prefix(prefix).exec();
    return new Map(got.kvs.map((kv) => [kv.key.toString().slice(prefix.length), kv.mod_revision]));
  }

  function changedKeys(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
    return [...after].filter(([k, rev]) => before.get(k) !== rev).map(([k]) => k).sort();
  }

  beforeAll(async () => {
    cluster = await startEtcdCluster({ addrs: ['127.0.108.1'], clientPort: 20250, peerPort: 20251 });
    await cluster.waitWritable(60_000);
    raw = cluster.client();
  });

  afterAll(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    for (const c of clients) c.close();
    await cluster?.stop();
  });

  it('host HA registering 3,000 hosts at once is stored and read back; one host\'s change then writes its own key', async () => {
    const prefix = 'scale/clc/state/';
    const s = await open(CLC_STORE_SPEC, prefix);
    await s.update((d) => {
      for (let i = 0; i < HOSTS; i++) d.ha.hosts[hostName(i)] = newHostHaRecord(hostName(i), 'cluster01', T0 + i);
    });
    const again = await open(CLC_STORE_SPEC, prefix);
    expect(Object.keys(again.read().ha.hosts)).toHaveLength(HOSTS);
    expect(again.read()).toEqual(s.read());

    const before = await modRevisions(prefix);
    const h = hostName(1234);
    await s.update((d) => {
      const r = d.ha.hosts[h];
      if (r !== undefined) d.ha.hosts[h] = { ...r, reason: 'checked' };
    });
    const after = await modRevisions(prefix);
    // The host's own key and the head: not the section, not another host.
    expect(changedKeys(before, after)).toEqual([`c/ha/hosts/${encodeURIComponent(h)}`, 'head']);
    const third = await open(CLC_STORE_SPEC, prefix);
    expect(third.read().ha.hosts[h]?.reason).toBe('checked');
    expect(third.read()).toEqual(s.read());
  });

  it('a change of 200 instance records (a drain, a large launch) is stored in several txns and read back', async () => {
    const prefix = 'scale/instances/';
    const s = await open(CLC_STORE_SPEC, prefix);
    const id = (i: number): string => `i-${i.toString(16).padStart(8, '0')}`;
    await s.update((d) => {
      for (let i = 0; i < 200; i++) {
        d.instances[id(i)] = {
          instanceId: id(i), reservationId: 'r-0000abcd', ownerId: '000000000000', imageId: 'emi-0a1b2c3d', vmType: 'm1.small',
          partition: 'cluster01', launchTime: T0 + i, launchIndex: i, phase: 'requested',
        };
      }
    });
    await s.update((d) => {
      for (const r of Object.values(d.instances)) r.phase = 'launched';
    });
    const again = await open(CLC_STORE_SPEC, prefix);
    expect(Object.values(again.read().instances).filter((r) => r.phase === 'launched')).toHaveLength(200);
  });

  it('a CC view of 2,000 nodes is saved whole, and a round that only saw every node again writes one key', async () => {
    const prefix = 'scale/cc/cluster01/view/';
    const spec = viewStoreSpec('cluster01');
    const s = await open(spec, prefix);
    const save = (seen: number): Promise<void> => s.update((d: ViewSnapshot) => {
      d.partition = 'cluster01';
      d.nodes = Array.from({ length: NODES }, (_, i) => node(i, seen + i));
    });
    await save(T0);
    const before = await modRevisions(prefix);
    await save(T0 + 30_000);
    const after = await modRevisions(prefix);
    // Every node's lastSeen in one key, and the head: no node's own key.
    expect(changedKeys(before, after)).toEqual(['d/nodes/lastSeen', 'head']);
    const again = await open(spec, prefix);
    expect(again.read().nodes).toHaveLength(NODES);
    expect(again.read().nodes[1999]?.lastSeen).toBe(T0 + 30_000 + 1999);
    expect(again.read()).toEqual(s.read());
  });

  it('a state written with `ha` as one key reads as before, and its first write moves the hosts to their own keys', async () => {
    const prefix = 'scale/legacy/';
    const legacyHosts = 1000;
    const state = CLC_STORE_SPEC.options.initial();
    for (let i = 0; i < legacyHosts; i++) state.ha.hosts[hostName(i)] = newHostHaRecord(hostName(i), 'cluster01', T0 + i);
    // As a build before per-host keys wrote it: every top-level field one key, collections by entry.
    await raw.put(`${prefix}meta`).value(JSON.stringify({ schemaVersion: CLC_STORE_SPEC.options.schemaVersion, kind: CLC_STORE_SPEC.options.kind }));
    await raw.put(`${prefix}head`).value('');
    for (const [k, v] of Object.entries(state)) {
      const collection = k === 'instances' || k === 'runTokens' || k === 'volumes';
      await raw.put(`${prefix}f/${k}`).value(collection ? '"record"' : JSON.stringify(v));
    }
    const s = await open(CLC_STORE_SPEC, prefix);
    expect(s.read()).toEqual(state);
    await s.update((d) => { d.pagingKey = 'a'.repeat(64); });
    const section = JSON.parse(await raw.get(`${prefix}f/ha`).string() ?? 'null') as Record<string, unknown>;
    expect(section.hosts).toBeUndefined();
    expect((await raw.getAll().prefix(`${prefix}c/ha/hosts/`).keys()).length).toBe(legacyHosts);
    const again = await open(CLC_STORE_SPEC, prefix);
    expect(again.read()).toEqual({ ...state, pagingKey: 'a'.repeat(64) });
  });

  it('a large change split into several txns: a leader deposed between them has its next chunk refused, and what was written reads as a valid state', async () => {
    const prefix = 'scale/deposed/';
    const leaderKey = 'scale/election/leader';
    const put = await raw.put(leaderKey).value('me').exec();
    const epoch = (await raw.get(leaderKey).exec()).kvs[0]?.create_revision ?? put.header.revision;
    const fence: WriteFence = { check: () => ({ leading: true, key: leaderKey, epoch }), leaderName: () => 'other' };
    // A client whose second txn commit waits until another process took the leader key: the deposing
    // happens between this store's chunks, always, whatever the machine's speed.
    const base = connectEtcd({ endpoints: cluster.endpoints, callTimeoutMs: 20_000 });
    const s = await open(CLC_STORE_SPEC, prefix, { fence, client: base });
    const hooked = onSecondCommit(base, async () => {
      await raw.delete().key(leaderKey);
      await raw.put(leaderKey).value('other');
    });
    const deposing = hooked.client;
    const s2 = await open(CLC_STORE_SPEC, prefix, { fence, client: deposing });
    expect(s.revision()).toBeGreaterThan(0n);
    expect(await codeOf(s2.update((d) => {
      for (let i = 0; i < HOSTS; i++) d.ha.hosts[hostName(i)] = newHostHaRecord(hostName(i), 'cluster01', T0 + i);
    }))).toBe('StoreNotLeader');
    expect(hooked.commits()).toBeGreaterThanOrEqual(2);
    const stored = Object.keys((await open(CLC_STORE_SPEC, prefix)).read().ha.hosts).length;
    // The first chunk (independent host records) landed, the rest was refused: a prefix, read as a valid state.
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(HOSTS);
    expect(Object.keys(s2.read().ha.hosts)).toHaveLength(stored);
    // The next leader's same change completes, from what the deposed one left.
    const next = (await raw.get(leaderKey).exec()).kvs[0]?.create_revision as string;
    const successor = await open(CLC_STORE_SPEC, prefix, { fence: { check: () => ({ leading: true, key: leaderKey, epoch: next }), leaderName: () => 'other' } });
    await successor.update((d) => {
      for (let i = 0; i < HOSTS; i++) d.ha.hosts[hostName(i)] ??= newHostHaRecord(hostName(i), 'cluster01', T0 + i);
    });
    expect(Object.keys((await open(CLC_STORE_SPEC, prefix)).read().ha.hosts)).toHaveLength(HOSTS);
  });

  it('a split change whose later txn gets no answer: StoreUnavailable, and read() shows what etcd committed, from which the retry finishes', async () => {
    const prefix = 'scale/cut/';
    await open(CLC_STORE_SPEC, prefix); // created here: the hooked client's commits are the update's txns
    const base = connectEtcd({ endpoints: cluster.endpoints, callTimeoutMs: 20_000 });
    clients.push(base);
    const hooked = onSecondCommit(base, () => Promise.reject(new Error('injected: connection lost')));
    const s = await open(CLC_STORE_SPEC, prefix, { client: hooked.client });
    const addAll = (d: ReturnType<typeof s.read>): void => {
      for (let i = 0; i < HOSTS; i++) d.ha.hosts[hostName(i)] ??= newHostHaRecord(hostName(i), 'cluster01', T0 + i);
    };
    expect(await codeOf(s.update(addAll))).toBe('StoreUnavailable');
    expect(hooked.commits()).toBe(2);
    const committed = Object.keys((await open(CLC_STORE_SPEC, prefix)).read().ha.hosts).length;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(HOSTS);
    expect(Object.keys(s.read().ha.hosts)).toHaveLength(committed);
    await s.update(addAll);
    const again = await open(CLC_STORE_SPEC, prefix);
    expect(Object.keys(again.read().ha.hosts)).toHaveLength(HOSTS);
    expect(again.read()).toEqual(s.read());
  });
});
