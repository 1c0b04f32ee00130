/**
 * One factory for the CLC's and the CC's durable stores (issue 21): each store is described once
 * (a StoreSpec: its file name, its etcd key, its options and layout) and opened on the backend the
 * configuration chose. `file` (the default) is the JSON file in the state directory, as always; `etcd`
 * keeps it under `<etcd-prefix><key>/` through one client shared by the process's stores.
 */
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import type { Clock } from '../clock.js';
import type { EtcdLayout } from './etcdLayout.js';
import { openEtcdStore, type EtcdStore, type WriteFence } from './etcdStore.js';
import { openFileStore, type Store, type StoreOptions } from './store.js';

export interface StoreSpec<T> {
  /** Its file in the state directory (file backend). */
  readonly file: string;
  /** Its key segment under the etcd prefix, e.g. `clc/state` (etcd backend). */
  readonly key: string;
  readonly options: StoreOptions<T>;
  /** How its document is split into etcd keys (etcdLayout.ts); absent: one key per top-level field. */
  readonly layout?: EtcdLayout;
  /** How an update's draft is made (default structuredClone): the event log copies its frozen records by reference. */
  readonly draftOf?: (snapshot: T) => T;
  /** How the file backend opens it, when not with openFileStore (the event log has its own writer). */
  readonly openFile?: (path: string) => Promise<Store<T>>;
}

/** The configuration's store settings (shared/config/storeFlags.ts), as the factory needs them. */
export interface StoreSettings {
  readonly store: 'file' | 'etcd';
  readonly etcdEndpoints?: readonly string[] | undefined;
  readonly etcdPrefix: string;
  readonly etcdTimeoutMs: number;
  readonly etcdMaxTxnOps: number;
  readonly etcdMaxRequestBytes: number;
}

export interface StoreBackend {
  readonly kind: 'file' | 'etcd';
  /** Where a spec's data lives, for logs: a path, or etcd's key prefix. */
  where(spec: Pick<StoreSpec<unknown>, 'file' | 'key'>): string;
  open<T>(spec: StoreSpec<T>): Promise<Store<T>>;
  /** Stops the etcd watches and closes the client (nothing for files). */
  close(): Promise<void>;
}

export interface BackendDeps {
  readonly stateDir: string;
  readonly clock: Clock;
  /** Guards every etcd write (a replica that is not the leader may not write). */
  readonly fence?: WriteFence;
  /** The process's etcd client when it made one already (for its election); closed by close() all the same. */
  readonly etcdClient?: Etcd3;
  /** An etcd watch that failed or brought a change that could not be applied (for the log). */
  readonly onProblem?: (e: Error) => void;
}

export function storeBackendOf(settings: StoreSettings, deps: BackendDeps): StoreBackend {
  if (settings.store === 'file' || settings.etcdEndpoints === undefined) {
    return {
      kind: 'file',
      where: (spec) => join(deps.stateDir, spec.file),
      open: <T>(spec: StoreSpec<T>) => (spec.openFile ?? ((path: string) => openFileStore(path, spec.options)))(join(deps.stateDir, spec.file)),
      close: () => Promise.resolve(),
    };
  }
  const endpoints = settings.etcdEndpoints;
  // Loaded on first use: the etcd3 client (and gRPC) costs 0.5-0.8 s of start-up on a busy machine, and
  // the file path (the demo, a single machine) never needs it.
  let client: Promise<Etcd3> | undefined = deps.etcdClient !== undefined ? Promise.resolve(deps.etcdClient) : undefined;
  const clientOf = (): Promise<Etcd3> => (client ??= import('./etcdClient.js').then((m) => m.connectEtcd({ endpoints, callTimeoutMs: settings.etcdTimeoutMs })));
  const opened: EtcdStore<unknown>[] = [];
  const prefixOf = (spec: Pick<StoreSpec<unknown>, 'key'>): string => `${settings.etcdPrefix}${spec.key}/`;
  return {
    kind: 'etcd',
    where: (spec) => `etcd:${prefixOf(spec)}`,
    async open<T>(spec: StoreSpec<T>) {
      const store = await openEtcdStore<T>({
        client: await clientOf(), prefix: prefixOf(spec), options: spec.options, clock: deps.clock, timeoutMs: settings.etcdTimeoutMs,
        limits: { maxTxnOps: settings.etcdMaxTxnOps, maxRequestBytes: settings.etcdMaxRequestBytes },
        ...(spec.layout !== undefined ? { layout: spec.layout } : {}),
        ...(spec.draftOf !== undefined ? { draftOf: spec.draftOf } : {}),
        ...(deps.fence !== undefined ? { fence: deps.fence } : {}),
        ...(deps.onProblem !== undefined ? { onWatchProblem: deps.onProblem } : {}),
      });
      opened.push(store as EtcdStore<unknown>);
      return store;
    },
    async close() {
      for (const s of opened.splice(0)) await s.close().catch(() => undefined);
      if (client !== undefined) (await client).close();
    },
  };
}
