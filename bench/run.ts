/**
 * `npm run bench`: Ferry's hot paths against a plain baseline, side by side, as ratios.
 *   codec      typed-XML round trip of an NC report (50 instances) vs JSON round trip
 *   store      durable store update (fsync + rename + dir fsync) vs plain writeFile
 *   placement  drain plan of 40 instances over 100 nodes vs naive first fit
 *   view diff  the CC's "node changed" check after one poll of a 2000-node view vs the search per
 *              node it replaced (O(n) vs O(n²) per poll; found by the simulator's scale mode)
 *   stale      the keeper's stale-node check over 2000 nodes (every operation runs it) vs the search
 *              per host it replaced (same origin)
 *   credential one per-migration credential as the CC's runner waits for it: from the key pool made
 *              ahead (cc/migration/keyPool.ts) vs a key pair made when issued (before issue 19)
 *   poll round the CC's bookkeeping of one steady poll round of 4000 nodes (keeper, cache writer,
 *              migration plan driver; bench/pollRound.ts) vs applying the same reports to a view alone
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMessage, encodeMessage, type WireObject } from '../shared/wire/xmlCodec.js';
import { openFileStore } from '../shared/store/store.js';
import { planPlacement, type PlacementInstance, type PlacementNode } from '../cc/migration/placement.js';
import { fits, sub, type Resources } from '../shared/model/resources.js';
import { DEFAULT_VM_TYPES } from '../shared/model/vmTypes.js';
import { applyReport, initialView, isStale, type ClusterView } from '../cc/view.js';
import { ViewKeeper } from '../cc/viewKeeper.js';
import { ManualClock } from '../shared/clock.js';
import { silentLogger } from '../shared/log.js';
import { runCase, type BenchCase } from './harness.js';
import { applyAll, pollRoundRig } from './pollRound.js';
import { caCredentialIssuer, RANDOM_ISSUER_SOURCES, type CredentialRequest } from '../cc/migration/credentialIssuer.js';
import { KeyPool } from '../cc/migration/keyPool.js';
import { simMigrationCa } from '../sim/simCredentials.js';

const vmType = DEFAULT_VM_TYPES[1]!;
const report: WireObject = {
  host: '127.0.1.1', nodeState: 'enabled', healthy: true, hypervisor: 'sim',
  capacity: { cores: 64, memoryMiB: 262144, diskGiB: 4000 }, used: { cores: 50, memoryMiB: 12800, diskGiB: 250 },
  instances: Array.from({ length: 50 }, (_, i) => ({
    instanceId: `i-${i.toString(16).padStart(8, '0')}`, reservationId: 'r-0000abcd', imageId: 'emi-0a1b2c3d', ownerId: '000000000000',
    vmType: { ...vmType }, state: 'running', hypervisorState: 'running', launchTime: 1_700_000_000_000 + i, migrationState: 'none',
  })),
};

const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-'));
const store = await openFileStore(join(dir, 'bench.json'), { kind: 'ferry-bench', schemaVersion: 1, initial: () => ({ n: 0, report }) });
const plainFile = join(dir, 'plain.json');

const R = (cores: number, memoryMiB: number, diskGiB: number): Resources => ({ cores, memoryMiB, diskGiB });
const nodes: PlacementNode[] = Array.from({ length: 100 }, (_, i) => ({
  host: `127.0.1.${i + 1}`, enabled: true, usable: true, capacity: R(16, 32768, 500), used: R(i % 12, (i % 12) * 2048, (i % 12) * 20),
}));
const drain: PlacementInstance[] = Array.from({ length: 40 }, (_, i) => ({
  instanceId: `i-${i.toString(16).padStart(8, '0')}`, source: '127.0.1.1', resources: R(1 + (i % 4), 1024 * (1 + (i % 8)), 10 + (i % 5) * 10),
}));
function firstFit(): void {
  const free = new Map(nodes.map((n) => [n.host, sub(n.capacity, n.used)]));
  for (const inst of drain) {
    const n = nodes.find((x) => x.host !== inst.source && fits(inst.resources, free.get(x.host)!));
    if (n) free.set(n.host, sub(free.get(n.host)!, inst.resources));
  }
}

// A 2000-node view before and after one poll result: what the CC's keeper diffs on every poll.
const bigHosts = Array.from({ length: 2000 }, (_, i) => `127.0.${10 + Math.floor(i / 250)}.${(i % 250) + 1}`);
const polled = (v: ClusterView, host: string): ClusterView => applyReport(v, host, {
  host, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: R(16, 32768, 500), used: R(0, 0, 0), instances: [],
}, 1_700_000_000_000);
const bigView = bigHosts.reduce(polled, initialView('bench', bigHosts));
/** The search findEntry did before views carried an index (the baselines below are the code they replaced). */
const searchEntry = (view: ClusterView, host: string) => view.entries.find((e) => e.node.host === host);

// Nothing is stale (the clock stands at the last poll): only the check itself is timed.
const keeper = new ViewKeeper({
  initial: bigView, clock: new ManualClock(1_700_000_000_000), logger: silentLogger(),
  nodes: { describe: () => Promise.reject(new Error('not polled in the bench')) } as unknown as ConstructorParameters<typeof ViewKeeper>[0]['nodes'],
});
/** The stale check before: a search of the view per host. */
function staleBySearch(view: ClusterView, hosts: readonly string[], now: number): string[] {
  return hosts.filter((h) => {
    const e = searchEntry(view, h);
    return e !== undefined && isStale(e, now, 60_000);
  });
}

const ROUND_NODES = 4000;
const roundRig = await pollRoundRig(ROUND_NODES);
await roundRig.round(); // the first round brings every node in (a real change each): steady rounds are timed

const migrationCa = simMigrationCa(Date.now());
const keyPool = new KeyPool({ generate: RANDOM_ISSUER_SOURCES.keyPair, size: 8 });
keyPool.start();
await keyPool.filled();
const pooledIssuer = caCredentialIssuer(migrationCa, new ManualClock(Date.now()), { ...RANDOM_ISSUER_SOURCES, keyPair: () => keyPool.take() });
const freshIssuer = caCredentialIssuer(migrationCa, new ManualClock(Date.now()));
const credentialRequest: CredentialRequest = {
  migrationId: 'mig-0000abcd', instanceId: 'i-0000abcd', side: 'destination', host: '127.0.1.2', peerHost: '127.0.1.1', generation: 0, lifetimeMs: 600_000,
};

const cases: BenchCase[] = [
  {
    name: 'codec: typed XML round trip', baselineName: 'JSON round trip', iterations: 200,
    run: async () => { await decodeMessage(encodeMessage('ncDescribeResourceResponse', report)); },
    baseline: () => { JSON.parse(JSON.stringify(report)); },
  },
  {
    name: 'store: durable update', baselineName: 'plain writeFile', iterations: 30,
    run: async () => { await store.update((d) => { d.n++; }); },
    baseline: () => { writeFileSync(plainFile, JSON.stringify({ n: 1, report })); },
  },
  {
    name: 'placement: 40-instance drain, 100 nodes', baselineName: 'naive first fit', iterations: 200,
    run: () => { planPlacement(nodes, drain, { hosts: [], allow: true }); },
    baseline: firstFit,
  },
  {
    name: 'stale-node check, 2000 nodes', baselineName: 'search per host', iterations: 5,
    run: () => keeper.refreshStale(60_000, 500),
    baseline: () => { staleBySearch(bigView, bigHosts, 1_700_000_000_000); },
  },
  {
    // One take per round: the pool (8) refills in the background while the baseline runs.
    name: 'per-migration credential', baselineName: 'key pair made when issued', iterations: 1,
    run: async () => { await pooledIssuer.issue(credentialRequest); },
    baseline: async () => { await freshIssuer.issue(credentialRequest); },
  },
  {
    name: `poll round, ${ROUND_NODES} nodes`, baselineName: 'applyReport alone', iterations: 1,
    run: () => roundRig.round(),
    baseline: applyAll(ROUND_NODES),
  },
];

/** 41.0x slower than the baseline, or 1/1490x (that many times faster). */
function ratioText(ratio: number): string {
  return ratio >= 0.1 ? `${ratio.toFixed(1)}x` : `1/${(1 / ratio).toFixed(0)}x`;
}

console.log('case'.padEnd(42), 'ms/op'.padStart(10), 'baseline'.padEnd(20), 'ms/op'.padStart(10), 'ratio'.padStart(8));
for (const c of cases) {
  const r = await runCase(c);
  console.log(c.name.padEnd(42), r.msPerOp.toFixed(4).padStart(10), c.baselineName.padEnd(20), r.baselineMsPerOp.toFixed(4).padStart(10), ratioText(r.ratio).padStart(8));
}
await roundRig.close();
await keyPool.stop();
rmSync(dir, { recursive: true, force: true });
