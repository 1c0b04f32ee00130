/**
 * The one place an etcd client is made (the etcd3 npm client): endpoints from configuration, a
 * deadline on every unary call so a lost quorum or a dead member turns into a coded error rather
 * than a hang (the store and the election add their own deadline on top, shared/store/etcdStore.ts).
 */
import { Etcd3 } from 'etcd3';

export interface EtcdConnection {
  /** http://host:port client URLs of the cluster's members. */
  readonly endpoints: readonly string[];
  /** Deadline of one unary call, ms. */
  readonly callTimeoutMs: number;
}

export function connectEtcd(conn: EtcdConnection): Etcd3 {
  return new Etcd3({
    hosts: [...conn.endpoints],
    dialTimeout: conn.callTimeoutMs,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + conn.callTimeoutMs }),
  });
}
