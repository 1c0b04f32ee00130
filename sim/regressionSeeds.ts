/**
 * Seeds that once violated an invariant, each with its shrunk schedule (recorded, so a change to
 * the schedule generator does not lose the case) and what it found. They run in every `npm test`
 * (test/sim/simulation.test.ts); an entry stays after its bug is fixed.
 */
import type { SimEvent } from './schedule.js';

export interface RegressionSeed {
  readonly seed: number;
  readonly found: string;
  readonly schedule: readonly SimEvent[];
  /** How many CCs the cloud it was recorded on had (settingsFor's `ccCount`); absent: one (recorded before there were several). */
  readonly ccs?: number;
  /** How many CLC replicas it had (settingsFor's `clcReplicas`); absent: one (recorded before there were replicas). */
  readonly clcs?: number;
  /** CC replicas per partition it had (settingsFor's `ccReplicas`); absent: one (recorded before there were CC replicas). */
  readonly ccReplicas?: number;
}

export const REGRESSION_SEEDS: readonly RegressionSeed[] = [
  {
    seed: 866,
    found: 'invariant 3 (capacity), the model\'s: after a lost nc.json the NC re-adopts a user-stopped instance as a plain record '
      + '(a known limit the invariant exempts while its domain is shut off); once the host was powered off it had no domains, so '
      + 'the exemption lapsed; fixed in sim/invariants.ts (on a powered-off host every domain is off). Seen with CC replicas: '
      + 'the other replica took over after the leader crashed, so the runs went on',
    ccReplicas: 2,
    schedule: [
      { at: 841, kind: 'run', count: 4, minCount: 1, large: false },
      { at: 895, kind: 'crashCcAfterCalls', calls: 6 },
      { at: 1273, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 5555, kind: 'terminate', pick: 364 },
      { at: 6016, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 11317, kind: 'stopInstance', pick: 237, force: false },
      { at: 12828, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 13396, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 13488, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 17278, kind: 'loseNcStore', host: '127.0.50.3' },
      { at: 20526, kind: 'restartNc', host: '127.0.50.3' },
      { at: 37299, kind: 'powerOff', host: '127.0.50.3' },
    ],
  },
  {
    seed: 178,
    found: 'invariant 2 (runs twice): an ncRunInstance delayed past its timeout reached the NC after the CC\'s settling '
      + 'terminate had answered InstanceNotFound, and the CC had re-placed the instance elsewhere (first seen as seeds 2 and 216); '
      + 'fixed: the NC fences an id a terminate found absent (test/nc/runFence.test.ts)',
    schedule: [
      { at: 300, kind: 'netChaos', loss: 0.2, duplicate: 0.3, maxDelayMs: 1500 },
      { at: 705, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 710, kind: 'netChaos', loss: 0.2, duplicate: 0, maxDelayMs: 300 },
    ],
   },
  {
    seed: 361,
    found: 'invariant 1 (terminated but alive): the CC restarted blank, its view held the instance only as a tombstone on the node '
      + 'it was first placed on, and answered TerminateInstances from that tombstone while the VM ran on an unreachable node; '
      + 'fixed: the CC refreshes every node and refuses with NodeUnreachable (test/cc/terminateModify.test.ts)',
    schedule: [
      { at: 0, kind: 'tune', host: '127.0.50.5', mode: 'failing' },
      { at: 934, kind: 'modify', host: '127.0.50.2', state: 'disabled' },
      { at: 980, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 1106, kind: 'modify', host: '127.0.50.1', state: 'enabled' },
      { at: 1169, kind: 'modify', host: '127.0.50.1', state: 'enabled' },
      { at: 1220, kind: 'migrateOne', pick: 978, destinations: ['127.0.50.3','127.0.50.5'], allowHosts: true },
      { at: 1394, kind: 'modify', host: '127.0.50.3', state: 'disabled' },
      { at: 1477, kind: 'terminate', pick: 306 },
      { at: 1712, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 1718, kind: 'netChaos', loss: 0.2, duplicate: 0, maxDelayMs: 300 },
      { at: 1931, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 4464, kind: 'drain', host: '127.0.50.5', destinations: ['127.0.50.1'], allowHosts: false, partial: false, reserve: true },
      { at: 7917, kind: 'crashCc' },
      { at: 10423, kind: 'crashNcAfterWrites', host: '127.0.50.5', writes: 2 },
      { at: 13483, kind: 'restartCc' },
      { at: 15215, kind: 'terminate', pick: 693 },
      { at: 15596, kind: 'terminate', pick: 139 },
    ],
   },
  {
    seed: 6,
    found: 'invariant 2 (runs twice): a switch-over whose answer was lost after the destination had started the VM; the source '
      + 'took the broken stream for a failed migration and resumed its paused copy (first seen with the breakSwitchover fault, '
      + 'seeds 6, 36, 94 and 11 more of 300); fixed: the source keeps the guest paused and asks the destination to settle '
      + 'the migration (nc/hypervisor/sim/switchoverSettle.ts, test/nc/hypervisor/switchoverSettle.test.ts)',
    schedule: [
      { at: 8514, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 15381, kind: 'migrateOne', pick: 29, destinations: ['127.0.50.1', '127.0.50.4'], allowHosts: false },
      { at: 22944, kind: 'breakSwitchover', host: '127.0.50.2', phase: 'reply-lost' },
      { at: 23782, kind: 'migrateOne', pick: 689, destinations: ['127.0.50.4', '127.0.50.6'], allowHosts: true },
    ],
  },
  {
    seed: 326,
    found: 'invariant 1 (terminated but alive): an instance restarted elsewhere from a fenced host was then terminated; when the '
      + 'fenced host came back its NC re-adopted the old copy, and host HA neither destroyed it (not "running elsewhere") nor '
      + 'refrained from restarting it (first seen as seed 236; seed 883: an evacuation went on after HA let go of the host); '
      + 'fixed: TerminateInstances records terminatedAt, restarts skip such records and clearObsolete destroys their copies; '
      + 'the evacuation re-checks FENCED per restart; DisableHA leaves a fenced host fenced (test/clc/ha/haRuntime.test.ts, '
      + 'test/clc/ha/hostHaMachine.test.ts)',
    schedule: [
      { at: 914, kind: 'haSetup', maxUnhealthy: '1', recoverFailureThreshold: 0 },
      { at: 21459, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 32313, kind: 'fenceHost', host: '127.0.50.2' },
      { at: 32348, kind: 'terminate', pick: 332 },
      { at: 39980, kind: 'terminate', pick: 68 },
    ],
  },
  {
    seed: 973,
    found: 'invariant 2 (runs twice): FenceHost of a host whose VM had just been live-migrated away at the hypervisor (its '
      + 'destination NC slow to take it over): host HA restarted the VM elsewhere from the CC\'s view of the fenced host, '
      + 'while it ran at its destination; fixed: an instance in a live migration (record not none, or in an unfinished plan) '
      + 'is not restarted (test/clc/ha/haRuntime.test.ts)',
    schedule: [
      { at: 291, kind: 'haSetup', maxUnhealthy: '50%', recoverFailureThreshold: 2 },
      { at: 457, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 986, kind: 'partitionCc', host: '127.0.50.3' },
      { at: 1117, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 1361, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.4'], allowHosts: false, partial: false, reserve: false },
      { at: 1363, kind: 'powerOff', host: '127.0.50.1' },
      { at: 1379, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 2365, kind: 'crashNcAfterWrites', host: '127.0.50.4', writes: 3 },
      { at: 4803, kind: 'haSwitch', host: '127.0.50.2', enabled: false },
      { at: 6188, kind: 'crashCcAfterCalls', calls: 3 },
      { at: 7726, kind: 'crashClc' },
      { at: 19167, kind: 'healNet' },
      { at: 20090, kind: 'restartClc' },
      { at: 21187, kind: 'drain', host: '127.0.50.4', destinations: ['127.0.50.1', '127.0.50.3'], allowHosts: true, partial: true, reserve: false },
      { at: 26163, kind: 'restartCc' },
      { at: 26522, kind: 'slowHv', host: '127.0.50.3', maxMs: 2000 },
      { at: 28817, kind: 'fenceHost', host: '127.0.50.4' },
    ],
  },
  {
    seed: 730,
    found: 'invariant 4 (a fenced host runs): a drain queued before FenceHost was prepared on the fenced host the moment its NC came back enabled, right after a CC restart, before HA put it back into maintenance; fixed: the CLC tells every CC its FENCING/FENCED hosts each HA pass (ccSetFencedHosts), the CC never makes one a destination or a placement, and a CC daemon starts no migration item before it has heard that list (test/cc/migration/fencedHosts.test.ts)',
    schedule: [
      { at: 850, kind: 'crashCcAfterCalls', calls: 7 },
      { at: 1121, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 1236, kind: 'haSetup', maxUnhealthy: '34%', recoverFailureThreshold: 1 },
      { at: 7556, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 9107, kind: 'drain', host: '127.0.50.3', destinations: ['127.0.50.1'], allowHosts: false, partial: true, reserve: true },
      { at: 9652, kind: 'modify', host: '127.0.50.6', state: 'enabled' },
      { at: 9882, kind: 'drain', host: '127.0.50.3', destinations: ['127.0.50.4','127.0.50.5','127.0.50.6'], allowHosts: false, partial: false, reserve: true },
      { at: 11182, kind: 'fenceHost', host: '127.0.50.2' },
      { at: 39784, kind: 'crashClc' },
    ],
  },
  {
    seed: 933,
    found: 'invariant 2 (runs twice): after a CC restart, host HA\'s owed restart elsewhere of a fenced host\'s instances ran while the CC could not yet see another node, which already ran one of them (restarted there earlier); fixed: a restart elsewhere waits until the CC sees every node not FENCED (clc/ha/cloud/serviceActions.ts, test/clc/ha/haRuntime.test.ts)',
    schedule: [
      { at: 791, kind: 'haSetup', maxUnhealthy: '1', recoverFailureThreshold: 1 },
      { at: 1111, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 2257, kind: 'modify', host: '127.0.50.3', state: 'disabled' },
      { at: 7069, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 7314, kind: 'crashNcAfterWrites', host: '127.0.50.1', writes: 4 },
      { at: 9867, kind: 'crashCc' },
      { at: 14342, kind: 'restartCc' },
      { at: 14532, kind: 'terminate', pick: 864 },
      { at: 17746, kind: 'fenceHost', host: '127.0.50.4' },
    ],
  },
  {
    seed: 859,
    found: 'invariant 2 (runs twice): a ccRunInstances duplicated by the network ran again after the first attempt\'s run had an uncertain answer on a node that then went away; the CC, not seeing the instance, placed it on another node; fixed: the CC remembers ids whose run it could not settle and places them again only once that node answers (adopted if there, settled if not) (test/cc/runInstances.test.ts)',
    schedule: [
      { at: 1548, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 3619, kind: 'netChaos', loss: 0.05, duplicate: 0.1, maxDelayMs: 300 },
      { at: 4540, kind: 'drain', host: '127.0.50.2', destinations: [], allowHosts: false, partial: true, reserve: true },
      { at: 5233, kind: 'partitionCc', host: '127.0.50.6' },
      { at: 6014, kind: 'modify', host: '127.0.50.6', state: 'enabled' },
      { at: 6683, kind: 'migrateOne', pick: 701, destinations: [], allowHosts: true },
      { at: 6772, kind: 'run', count: 3, minCount: 1, large: true },
      { at: 7029, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.5','127.0.50.6'], allowHosts: true, partial: true, reserve: false },
      { at: 7109, kind: 'drain', host: '127.0.50.5', destinations: ['127.0.50.2','127.0.50.3','127.0.50.4','127.0.50.6'], allowHosts: true, partial: true, reserve: false },
      { at: 7224, kind: 'modify', host: '127.0.50.2', state: 'enabled' },
      { at: 7228, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.1','127.0.50.3','127.0.50.6'], allowHosts: true, partial: true, reserve: false },
      { at: 7399, kind: 'terminate', pick: 588 },
      { at: 7717, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 7941, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 10856, kind: 'modify', host: '127.0.50.6', state: 'enabled' },
      { at: 11590, kind: 'netChaos', loss: 0.05, duplicate: 0.3, maxDelayMs: 300 },
      { at: 12425, kind: 'crashNcAfterWrites', host: '127.0.50.3', writes: 4 },
      { at: 12780, kind: 'migrateOne', pick: 358, destinations: ['127.0.50.2','127.0.50.3','127.0.50.5','127.0.50.6'], allowHosts: true },
    ],
  },
  {
    seed: 2954,
    found: 'invariant 1 (lost): a ccRunInstances duplicated by the network; the first copy\'s run had an uncertain answer and its settling terminate reached the node (which crashed before answering), so the id stayed unsettled; the duplicate adopted the id from the CC\'s stale view and the CLC acknowledged an instance already gone; fixed: an unsettled id is neither adopted nor placed (cc/runInstances.ts)',
    schedule: [
      { at: 0, kind: 'tune', host: '127.0.50.2', mode: 'slow' },
      { at: 832, kind: 'haSetup', maxUnhealthy: '50%', recoverFailureThreshold: 0 },
      { at: 1845, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 3359, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.3'], allowHosts: true, partial: true, reserve: false },
      { at: 9610, kind: 'migrateOne', pick: 600, destinations: ['127.0.50.2'], allowHosts: true },
      { at: 13440, kind: 'modify', host: '127.0.50.3', state: 'disabled' },
      { at: 13480, kind: 'migrateOne', pick: 63, destinations: ['127.0.50.2'], allowHosts: true },
      { at: 13688, kind: 'drain', host: '127.0.50.3', destinations: [], allowHosts: true, partial: true, reserve: false },
      { at: 13690, kind: 'migrateOne', pick: 963, destinations: ['127.0.50.3'], allowHosts: true },
      { at: 13983, kind: 'migrateOne', pick: 797, destinations: ['127.0.50.1'], allowHosts: false },
      { at: 13991, kind: 'terminate', pick: 943 },
      { at: 14042, kind: 'run', count: 1, minCount: 1, large: true },
      { at: 14057, kind: 'modify', host: '127.0.50.3', state: 'disabled' },
      { at: 15010, kind: 'netChaos', loss: 0.05, duplicate: 0, maxDelayMs: 1500 },
      { at: 15094, kind: 'drain', host: '127.0.50.2', destinations: [], allowHosts: false, partial: false, reserve: true },
      { at: 16382, kind: 'powerOff', host: '127.0.50.3' },
      { at: 17351, kind: 'migrateOne', pick: 827, destinations: ['127.0.50.1','127.0.50.3'], allowHosts: true },
      { at: 17416, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 17483, kind: 'run', count: 1, minCount: 1, large: true },
      { at: 17625, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.1'], allowHosts: true, partial: false, reserve: false },
      { at: 17650, kind: 'terminate', pick: 343 },
      { at: 17688, kind: 'drain', host: '127.0.50.3', destinations: ['127.0.50.1','127.0.50.2'], allowHosts: true, partial: false, reserve: false },
      { at: 17700, kind: 'cancel', pick: 856 },
      { at: 17716, kind: 'drain', host: '127.0.50.1', destinations: [], allowHosts: false, partial: true, reserve: false },
      { at: 17966, kind: 'cancel', pick: 363 },
      { at: 18048, kind: 'drain', host: '127.0.50.1', destinations: ['127.0.50.3'], allowHosts: false, partial: false, reserve: false },
      { at: 18089, kind: 'drain', host: '127.0.50.2', destinations: ['127.0.50.1','127.0.50.3'], allowHosts: true, partial: true, reserve: false },
      { at: 18098, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 19756, kind: 'cancel', pick: 879 },
      { at: 20135, kind: 'modify', host: '127.0.50.3', state: 'enabled' },
      { at: 20279, kind: 'netCalm' },
      { at: 20633, kind: 'powerOff', host: '127.0.50.1' },
      { at: 24237, kind: 'netChaos', loss: 0.2, duplicate: 0.1, maxDelayMs: 1500 },
      { at: 24908, kind: 'haSwitch', host: '127.0.50.3', enabled: true },
      { at: 28346, kind: 'crashNcAfterWrites', host: '127.0.50.2', writes: 6 },
      { at: 28863, kind: 'netCalm' },
      { at: 29273, kind: 'fenceHost', host: '127.0.50.1' },
      { at: 32219, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 32750, kind: 'powerOn', host: '127.0.50.3' },
      { at: 33211, kind: 'haSwitch', host: '127.0.50.2', enabled: true },
      { at: 33217, kind: 'netChaos', loss: 0.2, duplicate: 0.3, maxDelayMs: 300 },
      { at: 35107, kind: 'run', count: 3, minCount: 1, large: false },
    ],
  },
  {
    seed: 2,
    found: 'invariant 6 (cc view): an instance migrated once (item completed on its destination), then stopped by its user and '
      + 'started after its node was disabled, so the start re-homed it: the CC listed it on no host, its completed migration '
      + 'preferring the dead copy on the old destination over the live one; fixed: the preferred copy wins only while it lives '
      + '(cc/migration/listing.ts, test/cc/migration/listing.test.ts)',
    schedule: [
      { at: 1103, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 2232, kind: 'migrateOne', pick: 20, destinations: ['127.0.50.1', '127.0.50.4', '127.0.50.5'], allowHosts: false },
      { at: 33314, kind: 'stopInstance', pick: 630, force: false },
      { at: 42205, kind: 'startInstance', pick: 618, disableFirst: true },
    ],
  },
  {
    seed: 135,
    found: 'invariant 9 (volume fenced): host HA fenced a host from an instance\'s volume before restarting it elsewhere, the restart '
      + 'found no room (the other hosts off or disabled), EnableService unfenced the host and HA powered the instance on there again, '
      + 'running with a volume the storage had fenced it from, the volume left attaching; fixed: the NC connects an instance\'s volumes '
      + 'before it starts its shut-off domain, and HA re-attaches the volumes to the copy it powers on (clc/ha/cloud/serviceActions.ts)',
    schedule: [
      { at: 9, kind: 'powerOff', host: '127.0.50.2' },
      { at: 356, kind: 'createVolume', partition: 'sim01', sizeGiB: 8 },
      { at: 442, kind: 'haSetup', maxUnhealthy: '2', recoverFailureThreshold: 2 },
      { at: 1561, kind: 'run', count: 2, minCount: 1, large: true },
      { at: 26152, kind: 'terminate', pick: 818 },
      { at: 28368, kind: 'attachVolume', volume: 143, pick: 864, device: '/dev/sdf' },
      { at: 36239, kind: 'modify', host: '127.0.50.3', state: 'disabled' },
      { at: 36257, kind: 'modify', host: '127.0.50.1', state: 'disabled' },
      { at: 39654, kind: 'fenceHost', host: '127.0.50.3' },
    ],
  },
  {
    seed: 203,
    found: 'invariant 1 (settled, not running): a StopInstances whose answer was lost (the NC crashed right after persisting the '
      + 'stop, before shutting the domain down), then a StartInstances the CC answered "running" from its view without asking the '
      + 'NC; the restarted NC finished the stop: the instance stayed stopped after a start was acknowledged; fixed: the CC asks the '
      + 'NC (ncStartInstance, userStart), which clears the stop\'s mark (cc/userStart.ts, test/cc/userStart.test.ts)',
    schedule: [
      { at: 391, kind: 'modify', host: '127.0.50.1', state: 'disabled' },
      { at: 2117, kind: 'crashNcAfterWrites', host: '127.0.50.5', writes: 4 },
      { at: 3521, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 3719, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 3764, kind: 'modify', host: '127.0.50.5', state: 'disabled' },
      { at: 3873, kind: 'terminate', pick: 194 },
      { at: 24389, kind: 'stopInstance', pick: 975, force: false },
      { at: 37215, kind: 'startInstance', pick: 954, disableFirst: true },
    ],
  },
  {
    seed: 429,
    found: 'invariant 9 (volume twice): a node lost its nc.json while an instance there held a volume; the re-adopted record '
      + 'had no volumes, so the NC answered DetachVolume "not attached", the CLC released the volume while the domain still held '
      + 'it, and attached it to an instance on another host: two running copies wrote it; fixed: a re-adopted record holds its '
      + 'domain\'s volumes (nc/reconcile.ts adoptedRecord, test/nc/reconcile.test.ts)',
    schedule: [
      { at: 73, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 422, kind: 'createVolume', partition: 'sim01', sizeGiB: 4 },
      { at: 782, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 1707, kind: 'run', count: 4, minCount: 1, large: false },
      { at: 7934, kind: 'drain', host: '127.0.50.5', destinations: ['127.0.50.1'], allowHosts: false, partial: false, reserve: true },
      { at: 7974, kind: 'drain', host: '127.0.50.3', destinations: ['127.0.50.1', '127.0.50.4', '127.0.50.5'], allowHosts: true, partial: false, reserve: true },
      { at: 8093, kind: 'migrateOne', pick: 335, destinations: ['127.0.50.6'], allowHosts: true },
      { at: 8113, kind: 'run', count: 1, minCount: 1, large: true },
      { at: 8129, kind: 'terminate', pick: 714 },
      { at: 8171, kind: 'migrateOne', pick: 84, destinations: ['127.0.50.1', '127.0.50.3', '127.0.50.6'], allowHosts: false },
      { at: 8341, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 8369, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 8412, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 8647, kind: 'terminate', pick: 132 },
      { at: 8719, kind: 'terminate', pick: 297 },
      { at: 9312, kind: 'attachVolume', volume: 584, pick: 769, device: '/dev/sdh' },
      { at: 19027, kind: 'loseNcStore', host: '127.0.50.6' },
      { at: 21241, kind: 'restartNc', host: '127.0.50.6' },
      { at: 25940, kind: 'detachVolume', volume: 474, force: false },
      { at: 29775, kind: 'attachVolume', volume: 610, pick: 8, device: '/dev/sdh' },
    ],
  },
  {
    seed: 1104,
    ccs: 2,
    found: 'invariant 1 (terminated but alive): a StartInstances re-homed a stopped instance (its node disabled) while a '
      + 'TerminateInstances of it ran: the terminate reached the stopped copy on the old node, the start\'s new copy on another '
      + 'node was made at the same time and lived on; fixed: a user\'s terminate is kept on the tombstone (endedBy user) and the '
      + 'CC\'s move repair ends every other copy of that instance (cc/moveRepair.ts rule 1, test/cc/moveRepair.test.ts)',
    schedule: [
      { at: 463, kind: 'run', count: 4, minCount: 1, large: false },
      { at: 854, kind: 'terminate', pick: 5 },
      { at: 860, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 6554, kind: 'run', count: 3, minCount: 1, large: true },
      { at: 6810, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 18272, kind: 'terminate', pick: 336 },
      { at: 18292, kind: 'drain', host: '127.0.50.4', destinations: ['127.0.50.3'], allowHosts: true, partial: false, reserve: true },
      { at: 18346, kind: 'terminate', pick: 872 },
      { at: 19481, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 21404, kind: 'stopInstance', pick: 931, force: true },
      { at: 22749, kind: 'drain', host: '127.0.50.1', destinations: [], allowHosts: true, partial: false, reserve: false },
      { at: 22813, kind: 'terminate', pick: 565 },
      { at: 27846, kind: 'terminate', pick: 81 },
      { at: 31565, kind: 'modify', host: '127.0.50.4', state: 'enabled' },
      { at: 31649, kind: 'startInstance', pick: 316, disableFirst: false },
      { at: 31661, kind: 'terminate', pick: 696 },
    ],
  },
  {
    seed: 1105,
    found: 'invariant 1 (settled: two copies): the CC crashed during a drain\'s cold move, after ncRunInstance had defined the '
      + 'stopped copy on the new node and before ncTerminateInstance forgot the old one: two shut-off copies of one instance, and '
      + 'nothing finished the move; fixed: the new copy records where it came from and the move\'s generation (moved), and the '
      + 'CC\'s move repair forgets the older stopped copy (cc/moveRepair.ts rule 2, test/cc/moveRepair.test.ts)',
    schedule: [
      { at: 284, kind: 'drain', host: '127.0.50.5', destinations: ['127.0.50.2', '127.0.50.4'], allowHosts: false, partial: false, reserve: true },
      { at: 767, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 4305, kind: 'run', count: 1, minCount: 1, large: false },
      { at: 5594, kind: 'modify', host: '127.0.50.2', state: 'disabled' },
      { at: 5907, kind: 'run', count: 3, minCount: 1, large: true },
      { at: 5927, kind: 'loseNcStore', host: '127.0.50.5' },
      { at: 6019, kind: 'terminate', pick: 493 },
      { at: 6045, kind: 'migrateOne', pick: 932, destinations: ['127.0.50.1', '127.0.50.2', '127.0.50.4'], allowHosts: true },
      { at: 6092, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 10356, kind: 'haSwitch', host: '127.0.50.2', enabled: true },
      { at: 11954, kind: 'terminate', pick: 745 },
      { at: 28030, kind: 'crashCcAfterCalls', calls: 5 },
      { at: 31746, kind: 'stopInstance', pick: 507, force: true },
      { at: 34619, kind: 'drain', host: '127.0.50.4', destinations: ['127.0.50.5'], allowHosts: false, partial: true, reserve: false },
    ],
  },
  {
    seed: 113,
    found: 'invariant 7 (node state): an EnableService reached the NC, which persisted it, and nc.json was lost before the answer '
      + 'came back; the CLC then acknowledged enabled and the node restarted disabled, as a lost store does; the acknowledgement was '
      + 'true when given, so the ledger was wrong: a modify acknowledged across a store loss is now uncertain unless it asked for '
      + 'disabled (sim/ledger.ts modifySent)',
    schedule: [
      { at: 45, kind: 'run', count: 3, minCount: 1, large: false },
      { at: 450, kind: 'haSetup', maxUnhealthy: '1', recoverFailureThreshold: 1 },
      { at: 450, kind: 'terminate', pick: 889 },
      { at: 982, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 1669, kind: 'createVolume', partition: 'sim01', sizeGiB: 1 },
      { at: 2265, kind: 'slowHv', host: '127.0.50.3', maxMs: 300 },
      { at: 3404, kind: 'haSwitch', host: '127.0.50.2', enabled: false },
      { at: 5921, kind: 'attachVolume', volume: 624, pick: 790, device: '/dev/sdg' },
      { at: 6717, kind: 'slowHv', host: '127.0.50.3', maxMs: 2 },
      { at: 6843, kind: 'quarantine', host: '127.0.50.2', quarantined: true },
      { at: 7452, kind: 'modify', host: '127.0.50.1', state: 'disabled' },
      { at: 8213, kind: 'haSwitch', host: '127.0.50.3', enabled: false },
      { at: 9293, kind: 'detachVolume', volume: 115, force: false },
      { at: 10402, kind: 'migrateOne', pick: 670, destinations: ['127.0.50.4'], allowHosts: false },
      { at: 11412, kind: 'drain', host: '127.0.50.1', destinations: ['127.0.50.3'], allowHosts: false, partial: false, reserve: false },
      { at: 11925, kind: 'migrateOne', pick: 740, destinations: ['127.0.50.2'], allowHosts: true },
      { at: 13543, kind: 'netChaos', loss: 0.05, duplicate: 0, maxDelayMs: 300 },
      { at: 13936, kind: 'migrateOne', pick: 314, destinations: ['127.0.50.1', '127.0.50.4'], allowHosts: false },
      { at: 14745, kind: 'deleteVolume', volume: 348 },
      { at: 15117, kind: 'drain', host: '127.0.50.2', destinations: [], allowHosts: true, partial: true, reserve: false },
      { at: 15755, kind: 'terminate', pick: 453 },
      { at: 15778, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 15863, kind: 'drain', host: '127.0.50.1', destinations: ['127.0.50.3'], allowHosts: true, partial: true, reserve: false },
      { at: 15867, kind: 'modify', host: '127.0.50.2', state: 'enabled' },
      { at: 15939, kind: 'modify', host: '127.0.50.1', state: 'disabled' },
      { at: 16045, kind: 'terminate', pick: 123 },
      { at: 16078, kind: 'haSwitch', host: '127.0.50.2', enabled: false },
      { at: 16106, kind: 'drain', host: '127.0.50.4', destinations: ['127.0.50.1'], allowHosts: false, partial: true, reserve: false },
      { at: 16146, kind: 'modify', host: '127.0.50.1', state: 'enabled' },
      { at: 16148, kind: 'run', count: 2, minCount: 1, large: false },
      { at: 16321, kind: 'cancel', pick: 352 },
      { at: 16943, kind: 'migrateOne', pick: 913, destinations: [], allowHosts: true },
      { at: 20403, kind: 'loseNcStore', host: '127.0.50.1' },
    ],
  },
];
