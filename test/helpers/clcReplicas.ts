/**
 * CLC replicas on etcd for integration tests (issue 21): a replica is the cloud's CLC process spec
 * on its own port and state directory, with `--store etcd`; queries are signed with the region's
 * admin keys, as the CLI signs them. Used by clcFailover.test.ts and clcSplitBrain.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import xml2js from 'xml2js';
import type { Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { spawnDaemon, type RunningDaemon } from '../../scripts/daemon.js';
import { ROOT, type TestCloud } from './cloud.js';
import { withFlags as variant } from '../../scripts/cloudLayout.js';

export interface ClcReplica {
  readonly name: string;
  readonly port: number;
  /** Its admin API (scheme://host:port): its --advertise-url. */
  readonly url: string;
}

export interface ReplicaSettings {
  readonly endpoints: readonly string[];
  readonly prefix: string;
  readonly ttlSeconds: number;
  /** Other flag values (e.g. `--clusters` naming CC replicas, `--etcd-timeout-ms`). */
  readonly set?: Readonly<Record<string, string>>;
}

export interface ReplicaReply {
  readonly status: number;
  readonly text: string;
  readonly doc: any;
  readonly leaderHeader: string | null;
}

/** Starts `r` as a replica of the cloud's CLC (state in `<baseDir>/<name>`, log in logs/<name>.log); HA and events tick every 500 ms. */
export function startClcReplica(cloud: TestCloud, r: ClcReplica, s: ReplicaSettings): Promise<RunningDaemon> {
  mkdirSync(join(cloud.baseDir, r.name), { recursive: true, mode: 0o700 });
  const spec = variant(cloud.spec('clc'), r.name, {
    '--port': String(r.port), '--state-dir': join(cloud.baseDir, r.name),
    '--store': 'etcd', '--etcd-endpoints': s.endpoints.join(','), '--etcd-prefix': s.prefix,
    '--advertise-url': r.url, '--leader-ttl-seconds': String(s.ttlSeconds), '--ha-tick-ms': '500', '--events-poll-ms': '500',
    ...s.set,
  });
  return spawnDaemon(spec, { root: ROOT, logFile: join(cloud.baseDir, 'logs', `${r.name}.log`) });
}

/** One signed AWS-Query request to a replica; any status is a result. */
export async function replicaQuery(url: string, creds: Credentials, params: Record<string, string>): Promise<ReplicaReply> {
  const endpoint = `${url}/services/Eucalyptus`;
  const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url: endpoint, now: Date.now() });
  const res = await fetch(endpoint, { method: 'POST', headers: signed.headers, body: signed.body });
  const text = await res.text();
  return { status: res.status, text, doc: await xml2js.parseStringPromise(text, { explicitArray: false }), leaderHeader: res.headers.get('x-ferry-leader') };
}

/** A signed request that must succeed: its `<Action>Response` element. */
export async function replicaAction(url: string, creds: Credentials, params: Record<string, string>): Promise<any> {
  const r = await replicaQuery(url, creds, params);
  if (r.status !== 200) throw new Error(`${params.Action} at ${url} → ${r.status}: ${r.text}`);
  return r.doc[`${params.Action}Response`];
}

/** The CLC leader as etcd holds it under `prefix`: the oldest election key, its value (the URL) and create revision (the epoch). */
export async function electedLeader(client: Etcd3, prefix: string): Promise<{ readonly url: string; readonly epoch: string } | undefined> {
  const res = await client.getAll().prefix(`${prefix}clc/election/`).sort('Create', 'Ascend').exec();
  const kv = res.kvs[0];
  return kv === undefined ? undefined : { url: kv.value.toString(), epoch: kv.create_revision };
}

/** Polls `read` every 200 ms until `good` (a rejection is a value too), failing after `timeoutMs` with the last value. */
export async function until<T>(what: string, read: () => Promise<T>, good: (v: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read().catch((e: unknown) => e as T);
    if (good(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${v instanceof Error ? v.message : JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
