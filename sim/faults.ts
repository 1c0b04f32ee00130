/**
 * Fault events, one action per kind (network, crashes of NC / CC / CLC, CLC and CC leader changes, power, hypervisors, BMCs):
 * the table is the extension point for faults still to come (clock skew) — add a kind to
 * schedule.ts and its action here.
 */
import type { MigrationTuning } from '../nc/hypervisor/sim/migrationModel.js';
import { MIGRATION_DEFAULTS } from '../nc/hypervisor/sim/migrationModel.js';
import type { Ledger } from './ledger.js';
import { CLC_NAME } from './simClc.js';
import type { FaultEvent, HypervisorMode } from './schedule.js';
import { CC_NAME, type SimCloud } from './simCloud.js';

/** Slow: a tenth of the bandwidth (tens of seconds per VM); failing: dirtier than the link, never converges. */
export const HYPERVISOR_MODES: Readonly<Record<HypervisorMode, MigrationTuning>> = {
  normal: MIGRATION_DEFAULTS,
  slow: { ...MIGRATION_DEFAULTS, bandwidthMbps: 300, dirtyRateMiBps: 4 },
  failing: { ...MIGRATION_DEFAULTS, bandwidthMbps: 200, dirtyRateMiBps: 400, maxIterations: 5 },
};

type Actions = { [K in FaultEvent['kind']]: (cloud: SimCloud, e: Extract<FaultEvent, { kind: K }>, ledger: Ledger) => Promise<void> | void };

export const FAULT_ACTIONS: Actions = {
  netChaos: (c, e) => c.net.setConditions({ loss: e.loss, duplicate: e.duplicate, minDelayMs: 1, maxDelayMs: e.maxDelayMs }),
  netCalm: (c) => c.net.setConditions({ loss: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 5 }),
  partitionCc: (c, e) => c.partitionFromCc(c.ccOf(e.host), e.host),
  partitionMig: (c, e) => c.mig.partition(e.a, e.b),
  hangMig: (c, e) => c.mig.hang(e.a, e.b),
  breakSwitchover: (c, e) => c.mig.breakSwitchover(e.host, e.phase),
  clockStep: (c, e) => c.skews.step(e.clock, e.deltaMs),
  healNet: (c) => {
    c.net.heal();
    c.mig.heal();
  },
  crashNc: (c, e) => c.crashNc(e.host),
  restartNc: (c, e) => c.startNc(e.host),
  crashNcAfterWrites: (c, e) => c.crashNcAfterWrites(e.host, e.writes),
  loseNcStore: (c, e, ledger) => {
    if (c.loseNcStore(e.host)) ledger.storeLost(e.host);
  },
  crashCcAfterCalls: (c, e) => c.crashCcAfterCalls(e.cc ?? CC_NAME, e.calls),
  crashCc: (c, e) => c.crashCc(e.cc ?? CC_NAME),
  restartCc: (c, e) => c.startCc(e.cc ?? CC_NAME),
  // Its VMs die with it (SimCloud.beforePowerOff tells the ledger); bringing them back is Host HA's job.
  powerOff: (c, e) => c.powerOff(e.host),
  powerOn: (c, e) => c.powerOn(e.host),
  tune: (c, e) => c.retune(e.host, HYPERVISOR_MODES[e.mode]),
  slowHv: (c, e) => { c.node(e.host).hvLatencyMs = e.maxMs; },
  partitionClc: (c, e) => c.partitionFromCc(e.cc ?? CC_NAME, CLC_NAME),
  crashClc: (c) => c.crashClc(),
  restartClc: (c) => c.startClc(),
  clcLeaderChange: (c, e) => c.leaderFaults.cutLeaderFromEtcd(e.cutMs),
  clcStaleLeader: (c, e) => c.leaderFaults.pauseLeader(e.pauseMs),
  // With CC replicas (none drawn otherwise): as the CLC's, for the partition's CC leader.
  ccLeaderChange: (c, e) => c.ccLeaderFaults.get(e.cc ?? CC_NAME)?.cutLeaderFromEtcd(e.cutMs),
  ccStaleLeader: (c, e) => c.ccLeaderFaults.get(e.cc ?? CC_NAME)?.pauseLeader(e.pauseMs),
  bmc: (c, e) => { c.bmcModes.set(e.host, e.mode); },
};

export function runFault(cloud: SimCloud, e: FaultEvent, ledger: Ledger): Promise<void> | void {
  const action = FAULT_ACTIONS[e.kind] as (c: SimCloud, e: FaultEvent, l: Ledger) => Promise<void> | void;
  return action(cloud, e, ledger);
}
