/**
 * `npm run bench` (`-- --quick`: fewer rounds, a few minutes): issue 19's named cases, each against
 * its baseline side by side in one run (alternating rounds, medians; bench/harness.ts), printed as a
 * table and written to bench/results/latest.json (bench/report.ts). Cases the bench does not run yet
 * are listed with the reason. Measured here:
 *   wire-decode   the CC's decode of an NC report (50 instances) as it arrives, in the tiers' compact
 *                 JSON (shared/wire/jsonDecoder.ts, bounded) vs JSON.parse of the same bytes;
 *                 /xml: the typed-XML path kept for older peers, same baseline
 *   api           signed DescribeInstances over 1,000 instances, req/s: a real CLC vs a bare express
 *                 server returning the same XML (bench/apiCase.ts); api/queued: 1,000 RunInstances (200
 *                 quick) queued behind a pending DisableService, then released: all answered, in the
 *                 order they queued, none lost; the queue's drain vs the same launches unqueued (bench/apiQueued.ts)
 *   migration-sim one live migration through a cloud of real processes over mutual TLS vs the simulated
 *                 hypervisor's job alone between two more simhv daemons (bench/migrationSimCase.ts)
 *   migration-libvirt  euca-migrate-instances --wait of a real guest on the libvirt lab vs virsh migrate
 *                 --live --p2p --tls of the same guest (bench/migrationLibvirtCase.ts; skipped with the
 *                 reason where the lab cannot start)
 *   drain         50 mixed guests drained onto 100 destinations on the simulator's clock: makespan vs
 *                 the physical two-stream bound, over-commits; serial and all-at-once baselines
 *                 (bench/drainCase.ts)
 *   supervision   a real CC and CLC supervising 10,000 simulated hosts (--quick: 2,000) in scale-mode
 *                 processes at a 10 s poll period with host HA on: CPU per core, memory, failure to
 *                 SUSPECT under a burst of 100 failures, the storm gate (bench/supervisionCase.ts)
 * and, as sub-measurements of the issue's cases:
 *   migration-sim/credential       one per-migration credential as the CC's plan driver waits for it: from
 *                                  the key pool made ahead vs a key pair made when issued
 *   supervision/poll-round         the CC's bookkeeping of one steady poll round (keeper, cache writer,
 *                                  migration plan driver; bench/pollRound.ts) vs applying the reports alone
 *   supervision/poll-call          one node poll's CPU in the caller: the CC's describe vs a bare HTTPS POST
 *                                  on the same kept-alive mutual-TLS connections (bench/pollCallCase.ts)
 *   supervision/stale-check        the keeper's stale-node check over 2000 nodes vs the search per host
 *   supervision/node-health        the CC answering host HA's read of 2,000 nodes: ccDescribeNodeHealth
 *                                  `unchanged` (…-changed: one node's health moved, the whole compact
 *                                  list) vs ccDescribeNodes, handler, validation and encoding (bench/nodeHealthCase.ts)
 *   plan-quality/placement-time    drain plan of 40 instances over 100 nodes vs naive first fit
 *   store/durable-update           durable store update (fsync + rename + dir fsync) vs plain writeFile
 *   events/burst                   20 events recorded at once into a full 10,000-event history: group
 *                                  commit vs one durable write per event (bench/eventsCase.ts)
 *   store/burst                    50 updates of a 2,000-instance clc.json called at once: group commit
 *                                  vs one after another, a durable write each (bench/storeBurstCase.ts)
 *   store/etcd-update              one instance record changed in a 1,000-instance CLC state: the etcd
 *                                  backend on a real 3-member cluster vs the file store (bench/etcdCase.ts)
 *   store/etcd-ha-update           one host HA record changed among 3,000 HA hosts: etcd (one key per
 *                                  host) vs the file store (bench/etcdCase.ts)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeMessage, type WireObject } from '../shared/wire/xmlCodec.js';
import { encodeJsonMessage } from '../shared/wire/jsonCodec.js';
import { DEFAULT_DECODE_LIMITS } from '../shared/wire/wireDecoder.js';
import { decoderFor, type WireEncoding } from '../shared/wire/wireEncoding.js';
import { openFileStore } from '../shared/store/store.js';
import { planPlacement, type PlacementInstance, type PlacementNode } from '../cc/migration/placement.js';
import { fits, sub, type Resources } from '../shared/model/resources.js';
import { DEFAULT_VM_TYPES } from '../shared/model/vmTypes.js';
import { applyReport, initialView, isStale, type ClusterView } from '../cc/view.js';
import { ViewKeeper } from '../cc/viewKeeper.js';
import { ManualClock } from '../shared/clock.js';
import { silentLogger } from '../shared/log.js';
import { runCase, type BenchCase } from './harness.js';
import { measured, skipped, table, writeResults, type CaseResult } from './report.js';
import { applyAll, pollRoundRig } from './pollRound.js';
import { apiCase } from './apiCase.js';
import { apiQueued, apiQueuedRow } from './apiQueued.js';
import { planQuality } from './planScenarios.js';
import { caCredentialIssuer, RANDOM_ISSUER_SOURCES, type CredentialRequest } from '../cc/migration/credentialIssuer.js';
import { KeyPool } from '../cc/migration/keyPool.js';
import { simMigrationCa } from '../sim/simCredentials.js';
import { BURST, eventsRig } from './eventsCase.js';
import { STORE_BURST, storeBurstRig } from './storeBurstCase.js';
import { migrationSimCase } from './migrationSimCase.js';
import { migrationLibvirtCase } from './migrationLibvirtCase.js';
import { supervisionCases } from './supervisionCase.js';
import { pollCallCase } from './pollCallCase.js';
import { NODE_HEALTH_NODES, nodeHealthRig } from './nodeHealthCase.js';
import { DRAIN_MIX, DRAIN_VARIANTS, physicalBound, runDrain, type DrainRun } from './drainCase.js';
import { ETCD_HA_HOSTS, ETCD_INSTANCES, etcdRig } from './etcdCase.js';

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

const QUICK = process.argv.includes('--quick');
/** Alternating rounds per case (medians over them). */
const ROUNDS = QUICK ? 5 : 9;
const ROUND_NODES = QUICK ? 1000 : 4000;
const roundRig = await pollRoundRig(ROUND_NODES);
await roundRig.round(); // the first round brings every node in (a real change each): steady rounds are timed

const migrationCa = simMigrationCa(Date.now());
const keyPool = new KeyPool({ generate: RANDOM_ISSUER_SOURCES.keyPair, size: 8 });
keyPool.start();
await keyPool.filled();
const pooledIssuer = caCredentialIssuer(migrationCa, new ManualClock(Date.now()), { ...RANDOM_ISSUER_SOURCES, keyPair: () => keyPool.take() });
const freshIssuer = caCredentialIssuer(migrationCa, new ManualClock(Date.now()));
const events = await eventsRig();
const nodeHealth = await nodeHealthRig();
const storeBurst = await storeBurstRig();
const etcd = await etcdRig();
const credentialRequest: CredentialRequest = {
  migrationId: 'mig-0000abcd', instanceId: 'i-0000abcd', side: 'destination', host: '127.0.1.2', peerHost: '127.0.1.1', generation: 0, lifetimeMs: 600_000,
};

/** The NC report as the CC receives it, in each encoding; decoded the way HttpWireTransport decodes an answer. */
const reportBytes: Record<WireEncoding, Buffer> = {
  json: Buffer.from(encodeJsonMessage('ncDescribeResourceResponse', report)),
  xml: Buffer.from(encodeMessage('ncDescribeResourceResponse', report)),
};
const answerLimits = { ...DEFAULT_DECODE_LIMITS, maxBytes: Number.POSITIVE_INFINITY };
const decodeAnswer = (encoding: WireEncoding) => (): void => {
  const d = decoderFor(encoding, answerLimits);
  d.write(reportBytes[encoding]);
  d.end();
};
const parseJson = (): void => { JSON.parse(reportBytes.json.toString('utf8')); };

interface Timed {
  readonly name: string;
  readonly what: string;
  readonly partOf?: string;
  readonly target: number | null;
  /** Reported per operation in this unit. */
  readonly unit: 'µs' | 'ms';
  readonly bench: Omit<BenchCase, 'name' | 'baselineName'>;
}

const timed: Timed[] = [
  {
    name: 'wire-decode', target: 5, unit: 'µs',
    what: `decode of an NC report (50 instances, ${reportBytes.json.length} B) in the tiers' compact JSON, bounded and checked / JSON.parse of the same bytes`,
    bench: { iterations: 1000, run: decodeAnswer('json'), baseline: parseJson },
  },
  {
    name: 'wire-decode/xml', partOf: 'wire-decode', target: null, unit: 'µs',
    what: `the same report in typed XML (${reportBytes.xml.length} B; older peers, --wire-encoding xml), sax decoder / JSON.parse of the JSON bytes`,
    bench: { iterations: 40, run: decodeAnswer('xml'), baseline: parseJson },
  },
  {
    // One take per round: the pool (8) refills in the background while the baseline runs.
    name: 'migration-sim/credential', partOf: 'migration-sim', target: null, unit: 'ms',
    what: 'one per-migration credential as the plan driver waits for it: key pair from the pool made ahead / made when issued',
    bench: { iterations: 1, run: async () => { await pooledIssuer.issue(credentialRequest); }, baseline: async () => { await freshIssuer.issue(credentialRequest); } },
  },
  {
    name: 'supervision/poll-round', partOf: 'supervision', target: null, unit: 'ms',
    what: `one steady poll round of ${ROUND_NODES} nodes through the CC's keeper, cache writer and plan driver / applying the same reports to a view alone`,
    bench: { iterations: 1, run: () => roundRig.round(), baseline: applyAll(ROUND_NODES) },
  },
  {
    name: 'supervision/node-health', partOf: 'supervision', target: null, unit: 'ms',
    what: `the CC answering host HA's read of ${NODE_HEALTH_NODES} nodes (handler, validation, JSON encoding): ccDescribeNodeHealth unchanged (${nodeHealth.bytes.healthUnchanged} B) / ccDescribeNodes (${nodeHealth.bytes.describeNodes} B)`,
    bench: { iterations: 5, run: () => nodeHealth.healthUnchanged(), baseline: () => nodeHealth.describeNodes() },
  },
  {
    name: 'supervision/node-health-changed', partOf: 'supervision', target: null, unit: 'ms',
    what: `the same read after one node's health moved: ccDescribeNodeHealth in full (${nodeHealth.bytes.healthFull} B) / ccDescribeNodes`,
    bench: { iterations: 5, run: () => nodeHealth.healthChanged(), baseline: () => nodeHealth.describeNodes() },
  },
  {
    name: 'supervision/stale-check', partOf: 'supervision', target: null, unit: 'ms',
    what: 'the keeper\'s stale-node check over 2000 nodes (every CC operation) / the search per host it replaced',
    bench: { iterations: 5, run: () => keeper.refreshStale(60_000, 500), baseline: () => { staleBySearch(bigView, bigHosts, 1_700_000_000_000); } },
  },
  {
    name: 'plan-quality/placement-time', partOf: 'plan-quality', target: null, unit: 'ms',
    what: 'drain plan of 40 instances over 100 nodes (best-fit scoring) / naive first fit',
    bench: { iterations: 200, run: () => { planPlacement(nodes, drain, { hosts: [], allow: true }); }, baseline: firstFit },
  },
  {
    name: 'store/durable-update', target: null, unit: 'ms',
    what: 'durable store update (temp, fsync, rename, dir fsync) / plain writeFile',
    bench: { iterations: 30, run: async () => { await store.update((d) => { d.n++; }); }, baseline: () => { writeFileSync(plainFile, JSON.stringify({ n: 1, report })); } },
  },
  {
    name: 'events/burst', target: null, unit: 'ms',
    what: `${BURST} events recorded at once into a full 10,000-event history (events.json): group commit / one durable write per event`,
    bench: { iterations: 1, run: () => events.burst(), baseline: () => events.oneByOne() },
  },
  {
    name: 'store/burst', target: null, unit: 'ms',
    what: `${STORE_BURST} updates (one instance record each) of a 2,000-instance clc.json called at once: group commit / one after another, a durable write each`,
    bench: { iterations: 1, run: () => storeBurst.burst(), baseline: () => storeBurst.oneByOne() },
  },
  ...(etcd === undefined ? [] : [{
    name: 'store/etcd-update', target: null, unit: 'ms' as const,
    what: `one instance record changed in a ${ETCD_INSTANCES}-instance CLC state: etcd backend, 3 members on loopback (one key sent) / file store (whole document rewritten)`,
    bench: { iterations: 20, run: () => etcd.etcdUpdate(), baseline: () => etcd.fileUpdate() },
  }, {
    name: 'store/etcd-ha-update', target: null, unit: 'ms' as const,
    what: `one host HA record changed among ${ETCD_HA_HOSTS} HA hosts: etcd backend, 3 members on loopback (one key sent) / file store (whole document rewritten)`,
    bench: { iterations: 20, run: () => etcd.haEtcdUpdate(), baseline: () => etcd.haFileUpdate() },
  }]),
];

const results: CaseResult[] = [];
if (etcd === undefined) {
  results.push(skipped('store/etcd-update', 'one instance record changed: etcd backend / file store', null, 'lower', '/usr/bin/etcd is not installed (scripts/etcd-lab.sh install)'));
  results.push(skipped('store/etcd-ha-update', 'one host HA record changed: etcd backend / file store', null, 'lower', '/usr/bin/etcd is not installed (scripts/etcd-lab.sh install)'));
}
const print = (c: CaseResult): void => console.log(table([c]).split('\n')[1]);

// plan-quality: generated tight drains, a complete placement exists by construction (bench/planScenarios.ts).
{
  const seeds = QUICK ? 5 : 20;
  const ferryPlan = (s: Parameters<Parameters<typeof planQuality>[0]>[0]): number => planPlacement(s.nodes, s.drain, { hosts: [], allow: true }).placements.length;
  const small = planQuality(ferryPlan, seeds, 1000, 50);
  const large = planQuality(ferryPlan, seeds, 10_000, 50);
  const share = measured({
    name: 'plan-quality', what: `share of a tight 50-instance drain placed where a placement exists (${seeds} seeds each at 1k and 10k hosts): Ferry's planner / round-robin`,
    ferry: (small.ferryShare + large.ferryShare) / 2, baseline: (small.roundRobinShare + large.roundRobinShare) / 2, unit: 'share', target: null, better: 'higher',
  });
  // The target is on Ferry's share itself: everything placed whenever a placement exists.
  results.push({ ...share, target: 1, met: share.ferry >= 1 });
  results.push(measured({
    name: 'plan-quality/time-growth', partOf: 'plan-quality', what: 'median time to plan the drain at 10k hosts / at 1k hosts (ms each)',
    ferry: large.medianMs, baseline: small.medianMs, unit: 'ms', target: 12, better: 'lower',
  }));
}

// drain: Ferry and both baselines on the simulator's clock (deterministic: one run each; bench/drainCase.ts).
{
  const { boundMs } = physicalBound();
  const runs = new Map<string, DrainRun>();
  for (const v of DRAIN_VARIANTS) runs.set(v.name, await runDrain(v));
  const total = DRAIN_MIX.reduce((a, m) => a + m.count, 0);
  const row = (name: string, r: DrainRun, target: number | null, what: string): CaseResult => {
    const c = measured({ name, what, ferry: r.makespanMs / 1000, baseline: boundMs / 1000, unit: 's (simulated)', target, better: 'lower', ...(name === 'drain' ? {} : { partOf: 'drain' }) });
    const extra = { completed: r.completed, failed: r.failed, overCommits: r.overCommits, checks: r.checks };
    // The target holds only with every guest moved and no host ever over its capacity.
    return { ...c, ...extra, met: c.met === null ? null : c.met && r.overCommits === 0 && r.completed === total };
  };
  const f = runs.get('ferry')!;
  const serial = runs.get('serial')!;
  const all = runs.get('all-at-once')!;
  results.push(row('drain', f, 1.1, `${total} instances of mixed sizes and dirty rates onto 100 destinations (simulated cloud): makespan / physical two-stream bound; ${f.completed} moved, ${f.overCommits} over-commits in ${f.checks} checks`));
  results.push(row('drain/serial', serial, null, `the same drain one stream at a time / the same bound; ${serial.completed} moved, ${serial.overCommits} over-commits`));
  results.push(row('drain/all-at-once', all, null, `the same drain all at once without reservations (streams share the link) / the same bound; ${all.completed} moved, ${all.failed} failed, ${all.overCommits} over-commits`));
}

console.log(`npm run bench${QUICK ? ' -- --quick' : ''}: ${ROUNDS} alternating rounds per case, medians\n`);
console.log(table([]));
for (const c of results) print(c);
for (const t of timed) {
  const r = await runCase({ name: t.name, baselineName: 'baseline', ...t.bench }, ROUNDS);
  const scale = t.unit === 'µs' ? 1000 : 1;
  const c = measured({
    name: t.name, what: t.what, ferry: r.msPerOp * scale, baseline: r.baselineMsPerOp * scale, unit: t.unit, target: t.target, better: 'lower',
    ...(t.partOf !== undefined ? { partOf: t.partOf } : {}),
  });
  results.push(c);
  print(c);
}
await roundRig.close();
await keyPool.stop();
events.close();
storeBurst.close();
await etcd?.close();
rmSync(dir, { recursive: true, force: true });

const migration = await migrationSimCase(QUICK);
results.push(migration);
print(migration);

// The libvirt lab's QEMU guests are heavy: alone, after the simulated cloud is gone.
const libvirtMigration = await migrationLibvirtCase(QUICK);
results.push(libvirtMigration);
print(libvirtMigration);

// supervision: a real CC and CLC over 10,000 simulated hosts (2,000 with --quick) in scale-mode processes (bench/supervisionCase.ts).
for (const c of await supervisionCases(QUICK)) {
  results.push(c);
  print(c);
}
const pollCall = await pollCallCase(QUICK);
results.push(pollCall);
print(pollCall);

const api = await apiCase({ quick: QUICK });
results.push(api);
print(api);
const queued = apiQueuedRow(await apiQueued(QUICK ? 200 : 1000));
results.push(queued);
print(queued);

const out = join(import.meta.dirname, '..', '..', 'bench', 'results', 'latest.json');
writeResults(out, results);
console.log(`\n${table(results)}\n\nwritten to ${out}`);
