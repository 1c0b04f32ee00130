/**
 * The CC's bookkeeping of one poll round, in process: every node's report goes through the real
 * ViewKeeper (applyReport, update, transitions), the view cache writer on a real file store and an
 * idle PlanDriver subscribed to the keeper, as in cc/daemon.ts; the NC client answers from memory
 * on the next turn of the event loop, as replies arrive one by one from the network. Baseline: the
 * pure applyReport of the same reports into a view (the work a round cannot avoid).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanDriver } from '../cc/migration/planDriver.js';
import { DEFAULT_LIMITS } from '../cc/migration/settings.js';
import type { NodeClient } from '../cc/nodeClient.js';
import { applyReport, initialView, type ClusterView } from '../cc/view.js';
import { openViewStore, ViewCacheWriter } from '../cc/viewCache.js';
import { ViewKeeper } from '../cc/viewKeeper.js';
import { systemClock } from '../shared/clock.js';
import { silentLogger } from '../shared/log.js';
import { Mailbox } from '../shared/mailbox.js';
import { DEFAULT_VM_TYPES } from '../shared/model/vmTypes.js';
import type { NcNode } from '../shared/protocol/ncProtocol.js';

const vmType = DEFAULT_VM_TYPES[1]!;

export function hostsOf(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.${1 + Math.floor(i / 62500)}.${Math.floor((i % 62500) / 250)}.${(i % 250) + 1}`);
}

/** A node's report: 4 instances, the shape an NC sends. `round` moves `lastSeen`-like data so every report is new. */
export function reportOf(host: string, i: number): NcNode {
  return {
    host, nodeState: 'enabled', healthy: true, hypervisor: 'sim',
    capacity: { cores: 16, memoryMiB: 32768, diskGiB: 500 }, used: { cores: 4, memoryMiB: 1024, diskGiB: 20 },
    instances: Array.from({ length: 4 }, (_, k) => ({
      instanceId: `i-${(i * 4 + k).toString(16).padStart(8, '0')}`, reservationId: 'r-0000abcd', imageId: 'emi-0a1b2c3d', ownerId: '000000000000',
      vmType: { ...vmType }, state: 'running' as const, hypervisorState: 'running', launchTime: 1_700_000_000_000 + k, migrationState: 'none' as const,
    })),
  } as NcNode;
}

export interface RoundRig {
  /** One poll of every node; resolves when every report is applied and the cache writer is idle. */
  round(): Promise<void>;
  close(): Promise<void>;
}

export async function pollRoundRig(n: number): Promise<RoundRig> {
  const hosts = hostsOf(n);
  const reports = new Map(hosts.map((h, i) => [h, reportOf(h, i)]));
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-round-'));
  const store = await openViewStore(dir);
  const logger = silentLogger();
  const cache = new ViewCacheWriter(store, logger, systemClock);
  const nodes = {
    describe: (host: string) => new Promise((resolve) => setImmediate(() => resolve(reports.get(host)))),
  } as unknown as NodeClient;
  const keeper = new ViewKeeper({ initial: initialView('bench', hosts), nodes, clock: systemClock, logger, onChange: (v, significant) => cache.save(v, significant) });
  const runner = new PlanDriver({
    keeper, nodes, clock: systemClock, logger, limits: DEFAULT_LIMITS, uriTemplate: 'http://{host}:16509', placement: new Mailbox(), callTimeoutMs: 5000,
  });
  runner.start();
  return {
    async round() {
      await keeper.refreshHosts(hosts, 5000);
      await runner.idle();
      await cache.flush();
    },
    async close() {
      await runner.stop();
      await keeper.stop();
      await cache.flush();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The baseline: the same reports applied to a view, nothing else. */
export function applyAll(n: number): () => void {
  const hosts = hostsOf(n);
  const reports = hosts.map((h, i) => reportOf(h, i));
  let view: ClusterView = initialView('bench', hosts);
  return () => {
    const now = Date.now();
    hosts.forEach((h, i) => { view = applyReport(view, h, reports[i]!, now); });
  };
}
