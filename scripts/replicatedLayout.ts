/**
 * The replicated demo cloud (issue 21) as processes: the demo cloud's layout (cloudLayout.ts) with its
 * CLC as three replicas and its CC as two, all on etcd (`--store etcd`, one election each), and the
 * NCs given both CC URLs. Every port is derived from one base so that a test can move the whole cloud
 * onto its own addresses and ports. Pure: the etcd members are started by scripts/etcd-lab.sh.
 */
import { join } from 'node:path';
import { ccUrl, cloudLayout, withFlags, type CloudLayoutOptions, type ProcessSpec } from './cloudLayout.js';

export interface ReplicatedOptions {
  /** State, logs, PKI, pid files (and etcd's data under etcd/). */
  readonly baseDir: string;
  /** Where every CLC and CC replica listens (one address, a port each). */
  readonly controllerHost: string;
  readonly nodeHosts: readonly string[];
  /** One etcd member per address. */
  readonly etcdAddrs: readonly string[];
  /** CLC replicas at base..base+2, CCs at base+10..11, NCs at base+20, simhv TLS at base+21, etcd at base+30 (client) and +31 (peer). */
  readonly portBase: number;
  readonly clcReplicas?: number;
  readonly ccReplicas?: number;
  /** The election lease, seconds: a killed leader is replaced within twice this. */
  readonly leaderTtlSeconds?: number;
}

export const REPLICATED_DEFAULTS = Object.freeze({ clcReplicas: 3, ccReplicas: 2, leaderTtlSeconds: 4 });
export const ETCD_PREFIX = 'ferry-demo/';

export interface Replica {
  /** Process name: clc-a, clc-b, ..., cc-a, cc-b. */
  readonly name: string;
  /** Its URL (its --advertise-url): the CLC's admin origin or the CC's wire origin. */
  readonly url: string;
}

export interface ReplicatedCloud {
  readonly layout: CloudLayoutOptions;
  readonly etcd: { readonly dir: string; readonly addrs: readonly string[]; readonly clientPort: number; readonly peerPort: number; readonly endpoints: readonly string[] };
  readonly clcs: readonly Replica[];
  readonly ccs: readonly Replica[];
  /** The replicas' election lease, seconds. */
  readonly leaderTtlSeconds: number;
  /** Hosts first (simhv, NC), then the CCs, then the CLCs: the start order. */
  readonly specs: readonly ProcessSpec[];
  /** The state directory of a replica (its admin.credentials for a CLC). */
  stateDir(name: string): string;
}

const letter = (i: number): string => String.fromCharCode('a'.charCodeAt(0) + i);

export function replicatedCloud(o: ReplicatedOptions): ReplicatedCloud {
  const nClc = o.clcReplicas ?? REPLICATED_DEFAULTS.clcReplicas;
  const nCc = o.ccReplicas ?? REPLICATED_DEFAULTS.ccReplicas;
  const ttl = String(o.leaderTtlSeconds ?? REPLICATED_DEFAULTS.leaderTtlSeconds);
  const ports = { clc: o.portBase, cc: o.portBase + 10, nc: o.portBase + 20, simhvTls: o.portBase + 21, etcdClient: o.portBase + 30, etcdPeer: o.portBase + 31 };
  const layout: CloudLayoutOptions = {
    baseDir: o.baseDir, controllerHost: o.controllerHost, nodeHosts: o.nodeHosts,
    // Real-time migrations (256 MiB guests take ~3 s) one at a time from a source: a drain lasts long enough to kill a leader in it.
    simArgs: ['--time-scale', '1', '--tls-port', String(ports.simhvTls)],
  };
  const base = cloudLayout(layout);
  const spec = (name: string): ProcessSpec => {
    const s = base.find((x) => x.name === name);
    // The layout names its processes; a missing one is a bug in this file.
    if (s === undefined) throw new Error(`the cloud layout has no ${name}`);
    return s;
  };
  const scheme = new URL(ccUrl(layout)).protocol;
  const ccs = Array.from({ length: nCc }, (_, i) => ({ name: `cc-${letter(i)}`, url: `${scheme}//${o.controllerHost}:${ports.cc + i}` }));
  const clcs = Array.from({ length: nClc }, (_, i) => ({ name: `clc-${letter(i)}`, url: `http://${o.controllerHost}:${ports.clc + i}` }));
  const endpoints = o.etcdAddrs.map((a) => `http://${a}:${ports.etcdClient}`);
  const stateDir = (name: string): string => join(o.baseDir, name);
  const onEtcd = (r: Replica): Record<string, string> => ({
    '--store': 'etcd', '--etcd-endpoints': endpoints.join(','), '--etcd-prefix': ETCD_PREFIX, '--advertise-url': r.url, '--leader-ttl-seconds': ttl,
  });
  const ccUrls = ccs.map((c) => c.url).join(',');
  const partition = layout.partition ?? 'cluster01';
  const specs: ProcessSpec[] = [
    ...base.filter((s) => s.name.startsWith('simhv-')),
    ...o.nodeHosts.map((h) => withFlags(spec(`nc-${h}`), `nc-${h}`, { '--port': String(ports.nc), '--cc-url': ccUrls })),
    ...ccs.map((c, i) => withFlags(spec('cc'), c.name, {
      ...onEtcd(c), '--port': String(ports.cc + i), '--state-dir': stateDir(c.name), '--nc-port': String(ports.nc),
      '--migration-uri-template': `https://{host}:${ports.simhvTls}`, '--poll-interval-ms': '1000', '--max-migrations-per-source': '1', '--max-migrations-per-destination': '1',
    })),
    ...clcs.map((c, i) => withFlags(spec('clc'), c.name, {
      ...onEtcd(c), '--port': String(ports.clc + i), '--state-dir': stateDir(c.name), '--clusters': `${partition}=${ccUrls}`, '--ha-tick-ms': '500', '--events-poll-ms': '500',
    })),
  ];
  return {
    layout, clcs, ccs, specs, stateDir, leaderTtlSeconds: Number(ttl),
    etcd: { dir: join(o.baseDir, 'etcd'), addrs: o.etcdAddrs, clientPort: ports.etcdClient, peerPort: ports.etcdPeer, endpoints },
  };
}
