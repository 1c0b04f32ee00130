/**
 * A CC replica in the simulator (issue 21), assembled as cc/daemon.ts assembles one with `--store etcd`:
 * its election (simElection.ts under `cc/<partition>/election/`, named by its URL) is its CcLeadership
 * and the fence of its stores; the view cache and the CLC-epoch record are the partition's documents
 * at etcd (simEtcdStore.ts: a deposed replica's write is refused StoreNotLeader); every change it sends
 * to an NC carries its epoch (cc/replicas.ts stampEpochs, none sent off the lease); a follower refuses
 * every change NotLeader naming the leader (leaderOnly); node polling, the plan driver and move repair
 * are the leader's duties (shared/leader/leaderDuties.ts), started per term from what the NCs hold.
 */
import { ViewKeeper } from '../cc/viewKeeper.js';
import { initialView } from '../cc/view.js';
import { WireNodeClient } from '../cc/nodeClient.js';
import { CcService, SERVED_OPS, type CcServiceOptions } from '../cc/service.js';
import { leaderOnly, stampEpochs } from '../cc/replicas.js';
import { cachedNodes, viewStoreSpec, ViewCacheWriter, type ViewSnapshot } from '../cc/viewCache.js';
import { clcEpochStoreSpec, type ClcEpochRecord } from '../cc/clcEpochGuard.js';
import { LeaderDuties } from '../shared/leader/leaderDuties.js';
import type { Clock } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import { silentLogger } from '../shared/log.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import type { Store } from '../shared/store/store.js';
import type { WireHandlers, WireTransport } from '../shared/wire/transport.js';
import type { EpochWatch } from './epochWatch.js';
import type { Incarnation } from './incarnation.js';
import type { Prng } from './prng.js';
import type { SimCluster } from './settings.js';
import type { SimDisk } from './simDisk.js';
import { SimElection } from './simElection.js';
import type { SimEtcd } from './simEtcd.js';
import { openSimEtcdStore, type SimWriteFence } from './simEtcdStore.js';
import type { SimNetwork } from './simNetwork.js';

/** A partition's CC election at etcd (cc/replicas.ts CC_ELECTION_KEY, without the deployment's prefix). */
export function ccElectionPrefix(partition: string): string {
  return `cc/${partition}/election/`;
}

/** What the shared stores of a partition's CC replicas saw (coverage and invariant 10d). */
export class CcStoreWatch {
  /** Writes a deposed CC replica made that etcd refused (StoreNotLeader). */
  refused = 0;
  /** Writes committed by a CC replica. */
  committed = 0;
  readonly violations: { readonly invariant: string; readonly detail: string }[] = [];

  /** `store` as its replica uses it, each outcome counted; a commit from a replica etcd does not name leader is invariant 10d. */
  watch<T>(store: Store<T>, who: string, file: string, leads: () => boolean): Store<T> {
    return {
      read: () => store.read(),
      update: <R>(mutate: (draft: T) => R): Promise<R> => store.update(mutate).then((r) => {
        this.committed++;
        // No time passes between the commit and this: etcd names the writer leader, or a deposed replica wrote.
        if (!leads()) this.violations.push({ invariant: '10d deposed CC wrote', detail: `${who} committed a write to ${file} while etcd names another leader` });
        return r;
      }, (e: unknown) => {
        if (isFerryError(e) && e.code === 'StoreNotLeader') this.refused++;
        throw e;
      }),
    };
  }
}

/** `handlers`, each NotLeader refusal told to `seen`. */
function countNotLeader(handlers: WireHandlers, seen: () => void): WireHandlers {
  return Object.fromEntries(Object.entries(handlers).map(([op, handle]) => [op, (body, ctx) => handle(body, ctx).catch((e: unknown) => {
    if (isFerryError(e) && e.code === 'NotLeader') seen();
    throw e;
  })]));
}

export interface CcReplicaDeps {
  /** This replica's network name (`cc`, `cc-b`, …) and URL (its identity in the election). */
  readonly name: string;
  readonly url: string;
  readonly cluster: SimCluster;
  readonly life: Incarnation;
  readonly clock: Clock;
  /** etcd's clock. */
  readonly base: Clock;
  /** Its calls to the NCs (simulated network, the crash countdown applied). */
  readonly transport: WireTransport;
  readonly net: SimNetwork;
  readonly etcd: SimEtcd;
  readonly etcdRng: Prng;
  readonly disk: SimDisk;
  readonly storeRng: Prng;
  readonly storeLatencyMs: number;
  readonly pollIntervalMs: number;
  readonly ncTimeoutMs: number;
  /** The CcService's options but its keeper, nodes, clock, logger and leadership (as the single CC's). */
  readonly service: Omit<CcServiceOptions, 'keeper' | 'nodes' | 'clock' | 'logger' | 'leadership'>;
  /** With CLC replicas: the CLC epochs, guarded and watched (invariant 10a, per partition). */
  readonly clcEpochs: EpochWatch | undefined;
  readonly stores: CcStoreWatch;
  /** A follower refused a change NotLeader (coverage). */
  readonly onNotLeader: () => void;
  readonly trace: (line: string) => void;
}

export interface SimCcReplica {
  readonly life: Incarnation;
  readonly service: CcService;
  readonly keeper: ViewKeeper;
  readonly election: SimElection;
}

export function bootCcReplica(d: CcReplicaDeps): SimCcReplica {
  const { life, clock, cluster } = d;
  const partition = cluster.partition;
  const prefix = ccElectionPrefix(partition);
  const logger = silentLogger();
  const election = new SimElection({
    etcd: d.etcd, self: d.url, election: prefix, life, base: d.base, rng: d.etcdRng,
    onChange: (leading, epoch) => d.trace(`${d.name} ${leading ? 'leads' : 'no longer leads'} ${partition} (epoch ${epoch})`),
  });
  const fence: SimWriteFence = { fence: () => election.fence(), leaderUrl: () => election.leaderUrl(), holds: (key, epoch) => d.etcd.holds(key, epoch) };
  const leadsAtEtcd = (): boolean => d.etcd.leader(prefix)?.identity === d.url;
  const shared = <T>(file: string, options: Parameters<typeof openSimEtcdStore<T>>[0]['store']): Store<T> => d.stores.watch(
    openSimEtcdStore<T>({ disk: d.disk, file, store: options, life, clock, rng: d.storeRng, maxLatencyMs: d.storeLatencyMs, fence }), d.name, file, leadsAtEtcd,
  );
  const viewStore = shared<ViewSnapshot>(`cc/${partition}/view`, viewStoreSpec(partition).options);
  const cache = new ViewCacheWriter(viewStore, logger, clock);
  // Every change sent to an NC carries this term's epoch; none is sent while this replica does not lead.
  const nodes = new WireNodeClient(stampEpochs(d.transport, election, partition), (h) => `http://${h}:8775`);
  const keeper = new ViewKeeper({
    initial: initialView(partition, cluster.hosts, cachedNodes(viewStore.read(), partition)),
    nodes, clock, logger, onChange: (v, significant) => { if (election.leading()) cache.save(v, significant); },
  });
  const service = new CcService({ ...d.service, keeper, nodes, clock, logger, leadership: election });
  const ops = d.clcEpochs === undefined ? service.ops : d.clcEpochs.guard(cluster.cc, partition, service.ops, shared<ClcEpochRecord>(`cc/${partition}/clc-epoch`, clcEpochStoreSpec(partition).options));
  d.net.serve(d.name, countNotLeader(leaderOnly(typedHandlers(SERVED_OPS, ops), election, partition), d.onNotLeader), life);
  const duties = new LeaderDuties({
    leadership: election, role: `CC ${partition}`, logger,
    duties: () => [
      { name: 'term start', start: () => { keeper.forgetFencedHosts(); cache.save(keeper.get()); return Promise.resolve(); }, stop: () => Promise.resolve() },
      { name: 'node polling', start: () => { keeper.startPolling(d.pollIntervalMs, d.ncTimeoutMs); return Promise.resolve(); }, stop: () => keeper.stopPolling() },
      { name: 'plan driver', start: () => { service.planDriver.start(); return Promise.resolve(); }, stop: () => service.planDriver.stop() },
      { name: 'move repair', start: () => { service.moveRepair.start(); return Promise.resolve(); }, stop: () => service.moveRepair.stop() },
    ],
  });
  election.onLeadershipChange(() => duties.reconcile());
  election.start();
  return { life, service, keeper, election };
}
