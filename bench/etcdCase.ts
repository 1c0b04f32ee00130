/**
 * The `store/etcd-update` sub-measurement (issue 21): one instance record changed in a CLC state of
 * 1,000 instances, through the etcd backend on a real three-member etcd cluster on loopback
 * (127.0.82.61-63; each member fsyncs its WAL, the leader waits for a quorum) / the same change
 * through the file store (the whole document rewritten, fsynced, renamed). Needs /usr/bin/etcd
 * (scripts/etcd-lab.sh install).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { CLC_STORE_SPEC, type ClcState, type InstanceRecord } from '../clc/state/clcStore.js';
import { systemClock } from '../shared/clock.js';
import { connectEtcd } from '../shared/store/etcdClient.js';
import { openEtcdStore, type EtcdStore } from '../shared/store/etcdStore.js';
import { openFileStore, type Store } from '../shared/store/store.js';
import { etcdInstalled, startEtcdCluster, type EtcdCluster } from '../scripts/etcdCluster.js';

export const ETCD_INSTANCES = 1000;

export interface EtcdRig {
  etcdUpdate(): Promise<void>;
  fileUpdate(): Promise<void>;
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

/** Undefined when etcd is not installed. */
export async function etcdRig(): Promise<EtcdRig | undefined> {
  if (!etcdInstalled()) return undefined;
  const cluster: EtcdCluster = await startEtcdCluster({ addrs: ['127.0.82.61', '127.0.82.62', '127.0.82.63'], clientPort: 19261, peerPort: 19262 });
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
  let n = 0;
  const touch = (d: ClcState): void => {
    const r = d.instances[record(n % ETCD_INSTANCES).instanceId];
    if (r !== undefined) r.launchIndex = (r.launchIndex + 1) % 1000;
    n++;
  };
  return {
    etcdUpdate: () => etcd.update(touch),
    fileUpdate: () => file.update(touch),
    async close() {
      await etcd.close();
      client.close();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
