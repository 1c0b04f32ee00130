/**
 * Leader election through a real three-member etcd cluster on 127.0.82.11-13 (issue 21): one leader
 * among three candidates, an epoch that grows with every new leadership, a deposed leader's guarded
 * store write refused, and a leader that stops leading when etcd's quorum is lost.
 */
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.js';
import { EtcdElection, type LeaderStatus } from '../../shared/leader/etcdElection.js';
import { connectEtcd } from '../../shared/store/etcdClient.js';
import { openEtcdStore, type EtcdStore, type WriteFence } from '../../shared/store/etcdStore.js';
import { codeOf } from '../helpers/codeOf.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../../scripts/etcdCluster.js';

const TTL_S = 5;

async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Candidate {
  readonly name: string;
  readonly election: EtcdElection;
  readonly changes: LeaderStatus[];
}

describe.skipIf(!etcdInstalled())('leader election (real 3-member etcd)', () => {
  let cluster: EtcdCluster;
  const clients: Etcd3[] = [];
  const elections: EtcdElection[] = [];
  const stores: EtcdStore<unknown>[] = [];

  function client(): Etcd3 {
    const c = connectEtcd({ endpoints: cluster.endpoints, callTimeoutMs: 3000 });
    clients.push(c);
    return c;
  }

  function candidate(name: string, prefix: string): Candidate {
    const changes: LeaderStatus[] = [];
    const election = new EtcdElection({ client: client(), prefix, identity: name, ttlSeconds: TTL_S, clock: systemClock, onChange: (s) => changes.push(s) });
    elections.push(election);
    election.start();
    return { name, election, changes };
  }

  const leaders = (cs: readonly Candidate[]): Candidate[] => cs.filter((c) => c.election.leading());

  beforeAll(async () => {
    cluster = await startEtcdCluster({ addrs: ['127.0.82.11', '127.0.82.12', '127.0.82.13'], clientPort: 19211, peerPort: 19212 });
  });

  afterAll(async () => {
    for (const e of elections) await e.stop().catch(() => undefined);
    for (const s of stores) await s.close().catch(() => undefined);
    for (const c of clients) c.close();
    await cluster?.stop();
  });

  it('three candidates: exactly one leads, and every one of them names it with its epoch', async () => {
    const cs = ['r1', 'r2', 'r3'].map((n) => candidate(n, 'e/one/'));
    await until(() => leaders(cs).length === 1, 'one leader');
    const [leader] = leaders(cs);
    const epoch = leader?.election.status().epoch;
    expect(epoch).toMatch(/^\d+$/);
    await until(() => cs.every((c) => c.election.status().leader?.epoch === epoch), 'all observe the leader');
    for (const c of cs) expect(c.election.status().leader?.identity).toBe(leader?.name);
    expect(leader?.changes.some((s) => s.leading && s.epoch === epoch)).toBe(true);
    // Followers refuse to fence-check as leader and name who leads.
    const follower = cs.find((c) => c !== leader);
    expect(follower?.election.check()).toEqual({ leading: false, leader: `${leader?.name} (epoch ${epoch})` });
  });

  it('the epoch grows with every new leadership (a resignation, a deposed key)', async () => {
    const cs = ['a1', 'a2', 'a3'].map((n) => candidate(n, 'e/epoch/'));
    const epochs: bigint[] = [];
    const c = client();
    for (let round = 0; round < 3; round++) {
      await until(() => leaders(cs).length === 1, `a leader in round ${round}`);
      const [leader] = leaders(cs);
      const s = leader?.election.status();
      epochs.push(BigInt(s?.epoch ?? '0'));
      if (round === 0) {
        await leader?.election.stop();
        cs.splice(cs.indexOf(leader as Candidate), 1);
        cs.push(candidate(`a${4 + round}`, 'e/epoch/'));
      } else {
        // Someone deletes the leader's key (what an expired lease does): it must stop leading by itself.
        const key = leader?.election.check();
        expect(key?.leading).toBe(true);
        await c.delete().key(key?.leading === true ? key.key : '');
        await until(() => leader?.election.leading() === false, 'the deposed leader steps down');
        expect(leader?.changes.at(-1)?.leading).toBe(false);
      }
    }
    expect(epochs[1]).toBeGreaterThan(epochs[0] ?? 0n);
    expect(epochs[2]).toBeGreaterThan(epochs[1] ?? 0n);
  });

  it('a deposed leader\'s guarded write is refused with StoreNotLeader and nothing is written', async () => {
    const cs = ['w1', 'w2'].map((n) => candidate(n, 'e/fence/'));
    await until(() => leaders(cs).length === 1, 'a leader');
    const [old] = leaders(cs);
    const opts = { kind: 'ferry-test', schemaVersion: 1, initial: () => ({ n: 0 }) };
    const guarded = await openEtcdStore({ client: client(), prefix: 'e/fence-data/', options: opts, fence: old?.election as WriteFence, clock: systemClock });
    stores.push(guarded as EtcdStore<unknown>);
    await guarded.update((d) => { d.n = 1; });
    // What the old leader believed just before it was deposed: a check taken now, used after.
    const stale = old?.election.check();
    const staleFence: WriteFence = { check: () => stale ?? { leading: false, leader: '?' }, leaderName: () => old?.election.leaderName() ?? '?' };
    const staleStore = await openEtcdStore({ client: client(), prefix: 'e/fence-data/', options: opts, fence: staleFence, clock: systemClock });
    stores.push(staleStore as EtcdStore<unknown>);
    await client().delete().key(stale?.leading === true ? stale.key : '');
    await until(() => leaders(cs).some((c) => c !== old), 'a new leader');
    // etcd refuses it in the txn itself, even though the process still believes it leads.
    expect(await codeOf(staleStore.update((d) => { d.n = 2; }))).toBe('StoreNotLeader');
    // And once the election has noticed, the write is refused before it is sent, naming the new leader.
    await until(() => old?.election.leading() === false, 'the old leader knows');
    const err = await guarded.update((d) => { d.n = 3; }).catch((e: unknown) => e as Error & { code?: string });
    expect(err?.code).toBe('StoreNotLeader');
    const fresh = leaders(cs).find((c) => c !== old);
    expect(err?.message).toContain(fresh?.name);
    const check = await openEtcdStore({ client: client(), prefix: 'e/fence-data/', options: opts, clock: systemClock });
    stores.push(check as EtcdStore<unknown>);
    expect(check.read()).toEqual({ n: 1 });
    // The new leader writes through the same fence kind.
    const mine = await openEtcdStore({ client: client(), prefix: 'e/fence-data/', options: opts, fence: fresh?.election as WriteFence, clock: systemClock });
    stores.push(mine as EtcdStore<unknown>);
    await mine.update((d) => { d.n = 4; });
    await until(() => check.read().n === 4, 'the new leader\'s write is seen');
  });

  it('confirm(): the leader proves it leads with one quorum read; a follower, and a leader whose key is gone, are refused StoreNotLeader', async () => {
    const cs = ['k1', 'k2'].map((n) => candidate(n, 'e/confirm/'));
    await until(() => leaders(cs).length === 1, 'a leader');
    const [leader] = leaders(cs);
    const follower = cs.find((c) => c !== leader);
    await leader?.election.confirm();
    // Callers at once share the reads (one in flight, one queued): every one of them is answered.
    expect(await Promise.all(Array.from({ length: 8 }, () => codeOf(leader?.election.confirm() ?? Promise.resolve())))).toEqual(Array(8).fill('no error'));
    expect(await codeOf(follower?.election.confirm() ?? Promise.resolve())).toBe('StoreNotLeader');
    // The key gone from etcd (what an expired lease does): the next confirm says so and the leader steps down.
    const fence = leader?.election.check();
    await client().delete().key(fence?.leading === true ? fence.key : '');
    expect(await codeOf(leader?.election.confirm() ?? Promise.resolve())).toBe('StoreNotLeader');
    expect(leader?.election.leading()).toBe(false);
  });

  it('lost quorum: the leader stops leading within the lease TTL, and a leader with a larger epoch follows once quorum returns', async () => {
    const cs = ['q1', 'q2', 'q3'].map((n) => candidate(n, 'e/quorum/'));
    await until(() => leaders(cs).length === 1, 'a leader');
    const [leader] = leaders(cs);
    const before = BigInt(leader?.election.status().epoch ?? '0');
    const [m1, m2] = cluster.members;
    await m1?.kill9();
    await m2?.kill9();
    const t0 = Date.now();
    // A leader asked to prove it leads now, without quorum: refused within the read's deadline (the
    // election's default, 5 s, with slack), not left to act on its lease.
    const wasLeading = leader?.election.leading();
    expect(await codeOf(leader?.election.confirm() ?? Promise.resolve())).toBe(wasLeading === true ? 'StoreUnavailable' : 'StoreNotLeader');
    expect(Date.now() - t0).toBeLessThan(5000 + 20_000);
    await until(() => leaders(cs).length === 0, 'no leader without quorum', TTL_S * 1000 + 30_000);
    // The lease's own bound (TTL), plus slack for a timer on a busy machine; the callback said so.
    expect(Date.now() - t0).toBeLessThan(TTL_S * 1000 + 30_000);
    expect(leader?.changes.at(-1)?.leading).toBe(false);
    await m1?.restart();
    await m2?.restart();
    await cluster.waitWritable(120_000);
    await until(() => leaders(cs).length === 1, 'a leader again', 120_000);
    const after = BigInt(leaders(cs)[0]?.election.status().epoch ?? '0');
    expect(after).toBeGreaterThan(before);
  });
});
