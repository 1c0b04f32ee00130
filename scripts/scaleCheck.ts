/**
 * The scale check (issue 19): correctness, not speed, of a real CC and CLC supervising 10,000 hosts
 * (`node dist/scripts/scaleCheck.js [--hosts N]`; scripts/test.sh runs it after the tests). The hosts
 * run in scale-mode processes (scripts/scaleCloud.ts), the CC polls each every 10 s over mutual TLS
 * and host HA watches every one of them. It checks, and exits 1 naming what failed:
 *   1. every host reaches AVAILABLE in host HA, and the CC lists every host once, enabled and reachable
 *      (waited for: the CC sees hosts a few seconds after HA makes them AVAILABLE at enable);
 *   2. 100 hosts fail at once: each becomes SUSPECT (or goes further), and no other host leaves
 *      AVAILABLE while they are down (no false suspicion under the burst's load);
 *   3. the storm gate (MaxUnhealthy 50, below the 100) holds every failed host: each is reported held,
 *      none is ever RECOVERING, REMEDIATING, FENCING or FENCED;
 *   4. the 100 hosts boot again: every one is AVAILABLE again, and in the end all hosts are, none held.
 * It waits by polling the CLC with deadlines meant for a busy 2-core machine (minutes, not seconds); no
 * figure it prints is asserted. Addresses: the CC and CLC on 127.0.115.1 (ports 20350-20354), the
 * hosts from 127.64.100.1.
 */
import { Command } from 'commander';
import { items, until, type Doc } from './adminQuery.js';
import { isHeld, REMEDIATING_STATES, SCALE_BURST, SCALE_MAX_UNHEALTHY, SCALE_POLL_MS, startScaleCloud, type ScaleCloud } from './scaleCloud.js';

const LABEL = 'scale-check';
const CONTROLLER = '127.0.115.1';
const PORTS = { cc: 20350, clc: 20351, nc: 20352, ccMetrics: 20353, clcMetrics: 20354 } as const;
const FIRST_BLOCK = 100;
/** Deadlines: what a busy CI machine may need, never what the check expects to take. */
const AVAILABLE_WITHIN_MS = 20 * 60_000;
const STEP_WITHIN_MS = 10 * 60_000;
/** How often the whole partition's HA records are read while failed hosts are down (10,000 records each). */
const FULL_READ_EVERY_MS = 10_000;

function expectThat(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

async function check(cloud: ScaleCloud, hostCount: number): Promise<string[]> {
  const notes: string[] = [];
  const t0 = Date.now();
  const { hosts, haStates, q } = cloud;

  // 1. The CC's own list: every host once, enabled and reachable (the hosts' start-up hints and the
  // CC's first polls take a few seconds more than HA's first AVAILABLE, which comes at enable).
  let notOn: Doc[] = [];
  await until(LABEL, `the CC listing every host enabled and reachable (${hostCount} hosts)`, async () => {
    const nodes = items(((await q({ Action: 'DescribeNodes' })).nodeSet as Doc | undefined)?.item);
    const listed = new Map<string, number>();
    for (const n of nodes) listed.set(String(n.host), (listed.get(String(n.host)) ?? 0) + 1);
    expectThat(listed.size === hostCount && [...listed.values()].every((c) => c === 1), `DescribeNodes lists ${listed.size} hosts (${nodes.length} entries), not each of the ${hostCount} once`);
    notOn = nodes.filter((n) => n.nodeState !== 'enabled' || String(n.reachable) !== 'true');
    return notOn.length === 0 ? true : undefined;
  }, 2000, STEP_WITHIN_MS).catch((e: unknown) => {
    throw new Error(`${e instanceof Error ? e.message : String(e)}: ${notOn.length} not (first: ${JSON.stringify(notOn[0])})`);
  });
  const first = await haStates();
  const notAvailable = first.filter((r) => r.state !== 'AVAILABLE');
  expectThat(first.length === hostCount && notAvailable.length === 0, `${first.length} HA records once the CC saw every host, ${notAvailable.length} not AVAILABLE (first: ${JSON.stringify(notAvailable[0])})`);
  notes.push(`${hostCount} hosts listed by the CC, enabled and reachable, after ${((Date.now() - t0) / 1000).toFixed(1)} s more; all AVAILABLE to host HA`);

  // 2 and 3. The burst, spread over the scale processes.
  const failed = Array.from({ length: SCALE_BURST }, (_, i) => hosts[Math.floor((i * hostCount) / SCALE_BURST)]!);
  const failedSet = new Set(failed);
  const failedAt = await cloud.fail(failed);
  const down = new Set<string>();
  const held = new Set<string>();
  let lastFull = 0;
  const watchOthers = async (): Promise<void> => {
    if (Date.now() - lastFull < FULL_READ_EVERY_MS) return;
    lastFull = Date.now();
    const suspected = (await haStates()).filter((r) => !failedSet.has(String(r.host)) && r.state !== 'AVAILABLE');
    expectThat(suspected.length === 0, `${suspected.length} hosts that did not fail left AVAILABLE during the burst (first: ${JSON.stringify(suspected[0])})`);
  };
  const lookAtFailed = async (): Promise<Doc[]> => {
    const recs = await haStates(failed);
    for (const r of recs) {
      const host = String(r.host);
      expectThat(!REMEDIATING_STATES.has(String(r.state)), `${host} went ${String(r.state)} although ${SCALE_BURST} hosts failed with MaxUnhealthy ${SCALE_MAX_UNHEALTHY}: the storm gate did not hold`);
      if (r.state !== 'AVAILABLE') down.add(host);
      if (isHeld(r)) held.add(host);
    }
    return recs;
  };
  await until(LABEL, `every failed host SUSPECT and held by the storm gate (${SCALE_BURST} failed)`, async () => {
    await lookAtFailed();
    await watchOthers();
    return down.size === SCALE_BURST && held.size === SCALE_BURST ? true : undefined;
  }, 1000, STEP_WITHIN_MS);
  lastFull = 0;
  await watchOthers();
  const detectS = (Date.now() - Math.min(...failedAt.values())) / 1000;
  notes.push(`${SCALE_BURST} failed hosts all suspected and all held by the gate within ${detectS.toFixed(1)} s; no other host left AVAILABLE`);

  // 4. Back up.
  const revivedAt = Date.now();
  await cloud.revive(failed);
  await until(LABEL, `every revived host AVAILABLE again (${SCALE_BURST} revived)`, async () => {
    const recs = await lookAtFailed();
    return recs.length === SCALE_BURST && recs.every((r) => r.state === 'AVAILABLE') ? true : undefined;
  }, 1000, STEP_WITHIN_MS);
  notes.push(`${SCALE_BURST} revived hosts AVAILABLE again within ${((Date.now() - revivedAt) / 1000).toFixed(1)} s`);
  const end = await haStates();
  const stillOut = end.filter((r) => r.state !== 'AVAILABLE' || isHeld(r));
  expectThat(end.length === hostCount && stillOut.length === 0, `in the end ${end.length} HA records, ${stillOut.length} not AVAILABLE or still held (first: ${JSON.stringify(stillOut[0])})`);
  notes.push(`in the end all ${hostCount} AVAILABLE, none held (${((Date.now() - t0) / 1000).toFixed(0)} s of checks)`);
  return notes;
}

async function main(): Promise<void> {
  const opts = new Command('scale-check')
    .option('--hosts <n>', 'simulated hosts', '10000')
    .allowExcessArguments(false)
    .parse(process.argv)
    .opts<{ hosts: string }>();
  const hostCount = Number(opts.hosts);
  if (!Number.isInteger(hostCount) || hostCount < 2 * SCALE_BURST || hostCount > 64 * 254) {
    process.stderr.write(`scale-check: --hosts must be an integer from ${2 * SCALE_BURST} to ${64 * 254}, not ${opts.hosts}\n`);
    process.exit(2);
  }
  const started = Date.now();
  const cloud = await startScaleCloud({
    label: LABEL, hostCount, firstBlock: FIRST_BLOCK, controller: CONTROLLER, ports: PORTS, pollMs: SCALE_POLL_MS, maxUnhealthy: SCALE_MAX_UNHEALTHY,
    env: { FERRY_LOG_LEVEL: 'warn' }, availableWithinMs: AVAILABLE_WITHIN_MS,
  });
  const upS = (Date.now() - started) / 1000;
  let failure: unknown;
  let notes: string[] = [];
  try {
    notes = await check(cloud, hostCount);
  } catch (e) {
    failure = e;
  } finally {
    if (failure !== undefined) process.env.FERRY_BENCH_KEEP ??= '1';
    await cloud.close();
  }
  if (failure !== undefined) {
    process.stderr.write(`ferry scale check: FAILED: ${failure instanceof Error ? failure.message : String(failure)}\n`);
    process.exit(1);
  }
  console.log(`ferry scale check: ${hostCount} hosts in ${cloud.farms.length} scale processes, up and AVAILABLE in ${upS.toFixed(0)} s`);
  for (const n of notes) console.log(`ferry scale check: ${n}`);
  console.log(`ferry scale check: passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((e: unknown) => {
  process.stderr.write(`ferry scale check: FAILED: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
