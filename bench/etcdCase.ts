/**
 * The `store/etcd-update` sub-measurement (issue 21): one instance record changed in a CLC state of
 * 1,000 instances, through the etcd backend on a real three-member etcd cluster on loopback
 * (127.0.82.61-63; each member fsyncs its WAL, the leader waits for a quorum) / the same change
 * through the file store (the whole document rewritten, fsynced, renamed). Its HA row: one host HA
 * record changed in a CLC state of 3,000 HA hosts, the same two ways (on etcd one key per host).
 * Needs /usr/bin/etcd (scripts/etcd-lab.sh install).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { CLC_STORE_SPEC, type ClcState, type InstanceRecord } from '../clc/state/clcStore.js';
import { newHostHaRecord } from '../clc/ha/hostHaState.js';
import { systemClock } from '../shared/clock.js';
import { connectEtcd } from '../shared/store/etcdClient.js';
import { openEtcdStore, type EtcdStore } from '../shared/store/etcdStore.js';
import { openFileStore, type Store } from '../shared/store/store.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../scripts/etcdCluster.js';

export const ETCD_INSTANCES = 1000;
export const ETCD_HA_HOSTS = 3000;

export interface EtcdRig {
  etcdUpdate(): Promise<void>;
  fileUpdate(): Promise<void>;
  /** One host HA record changed among ETCD_HA_HOSTS. */
  haEtcdUpdate(): Promise<void>;
  haFileUpdate(): Promise<void>;
  close(): Promise<void>;
}

function record(i: number): InstanceRecord {
  const id = `i-${i.toString(16).padStart(8, '0')}`;
  return {
    instanceId: id, reservationId: 'r-0000abcd', ownerId: '000000000000', imageId: 'emi-0a1b2c3d', vmType: 'm1.small',
    partition: 'cluster01', launchTime: 1_700_000_000_000 + i, launchIndex: 0, phase: 'launched',
  };
}

function fill(d: ClcState): void {
  for (let i = 0; i < ETCD_INSTANCES; i++) d.instances[record(i).instanceId] = record(i);
}

const haHost = (i: number): string => `10.${Math.floor(i / 250)}.${i % 250}.1`;

function fillHa(d: ClcState): void {
  for (let i = 0; i < ETCD_HA_HOSTS; i++) d.ha.hosts[haHost(i)] = newHostHaRecord(haHost(i), 'cluster01', 1_700_000_000_000 + i);
}

/** Where the cluster runs (the bench's own addresses unless given). Undefined when etcd is not installed. */
export async function etcdRig(at = { addrs: ['127.0.82.61', '127.0.82.62', '127.0.82.63'], clientPort: 19261, peerPort: 19262 }): Promise<EtcdRig | undefined> {
  if (!etcdInstalled()) return undefined;
  const cluster: EtcdCluster = await startEtcdCluster(at);
  const client: Etcd3 = connectEtcd({ endpoints: cluster.endpoints, callTimeoutMs: 10_000 });
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-etcd-'));
  const etcd: EtcdStore<ClcState> = await openEtcdStore({
    client, prefix: 'bench/clc/state/', options: CLC_STORE_SPEC.options, clock: systemClock, timeoutMs: 10_000,
    ...(CLC_STORE_SPEC.layout !== undefined ? { layout: CLC_STORE_SPEC.layout } : {}),
  });
  const file: Store<ClcState> = await openFileStore(join(dir, 'clc.json'), CLC_STORE_SPEC.options);
  // Filled 100 records per write: etcd's default --max-txn-ops (128) bounds one txn.
  for (let i = 0; i < ETCD_INSTANCES; i += 100) {
    await etcd.update((d) => { for (let j = i; j < i + 100; j++) d.instances[record(j).instanceId] = record(j); });
  }
  await file.update(fill);
  // Host HA's 3,000 records: one update (sent in txns of 125 host keys), and the same in a file.
  const haEtcd: EtcdStore<ClcState> = await openEtcdStore({
    client, prefix: 'bench/clc/ha/', options: CLC_STORE_SPEC.options, clock: systemClock, timeoutMs: 10_000,
    ...(CLC_STORE_SPEC.layout !== undefined ? { layout: CLC_STORE_SPEC.layout } : {}),
  });
  await haEtcd.update(fillHa);
  const haFile: Store<ClcState> = await openFileStore(join(dir, 'clc-ha.json'), CLC_STORE_SPEC.options);
  await haFile.update(fillHa);
  let m = 0;
  const touchHa = (d: ClcState): void => {
    const h = haHost(m % ETCD_HA_HOSTS);
    const r = d.ha.hosts[h];
    if (r !== undefined) d.ha.hosts[h] = { ...r, seq: r.seq + 1 };
    m++;
  };
  let n = 0;
  const touch = (d: ClcState): void => {
    const r = d.instances[record(n % ETCD_INSTANCES).instanceId];
    if (r !== undefined) r.launchIndex = (r.launchIndex + 1) % 1000;
    n++;
  };
  return {
    etcdUpdate: () => etcd.update(touch),
    fileUpdate: () => file.update(touch),
    haEtcdUpdate: () => haEtcd.update(touchHa),
    haFileUpdate: () => haFile.update(touchHa),
    async close() {
      await etcd.close();
      await haEtcd.close();
      client.close();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
