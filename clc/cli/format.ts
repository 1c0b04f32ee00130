/**
 * Eucalyptus-style tab-separated rows for each command. Pure: readings in, lines out.
 *   NODE      partition host state cores used/total mem used/total MiB disk used/total GiB
 *   QUARANTINE host since reason                  (beneath its NODE, while quarantined)
 *   INSTANCE  id state type                         (beneath its NODE)
 *   INSTANCE  id MIGRATING-TO destination           (beneath its NODE, while it migrates away)
 *   SERVICE   type partition name state
 *   RESERVATION id owner group
 *   INSTANCE  id image state type launch-time zone node migration-state migration-source migration-destination
 *   AVAILABILITYZONE name state | |- vm-type free / max cpu ram disk
 *   VOLUME    id size snapshot zone status create-time
 *   ATTACHMENT volume instance device status attach-time
 */
import { MATRIX_HEADER, matrixColumns, matrixLabel } from '../core/matrixText.js';
import type {
  AttachmentReading, InstanceReading, MatrixReading, NodeReading, Reading, ReservationReading, ServiceReading, UnavailableReading, VolumeReading,
} from './responses.js';

const row = (...cols: (string | number)[]): string => cols.join('\t');

export function nodeLines(n: NodeReading): string[] {
  return [
    row('NODE', n.partition, n.host, n.state,
      `${n.used.cores}/${n.capacity.cores}`, `${n.used.memoryMiB}/${n.capacity.memoryMiB}`, `${n.used.diskGiB}/${n.capacity.diskGiB}`),
    ...quarantineLines(n),
    ...n.instancesSet.map((i) => (movingAway(n, i)
      ? row('INSTANCE', i.instanceId, 'MIGRATING-TO', i.migrationDestination)
      : row('INSTANCE', i.instanceId, i.state, i.instanceType))),
  ];
}

/** The node's quarantine (issue 18), when it holds one. */
export function quarantineLines(n: Pick<NodeReading, 'host' | 'quarantined' | 'quarantinedSince' | 'quarantineReason'>): string[] {
  return n.quarantined ? [row('QUARANTINE', n.host, n.quarantinedSince, n.quarantineReason)] : [];
}

/** Listed on `n` while its migration takes it to another node (the destination lists it plainly). */
function movingAway(n: NodeReading, i: NodeReading['instancesSet'][number]): boolean {
  return i.migrationDestination !== '' && i.migrationDestination !== n.host;
}

export function serviceLine(s: ServiceReading): string {
  return row('SERVICE', s.serviceId.type, s.serviceId.partition, s.serviceId.name, s.localState);
}

/** The default security group euca2ools printed beside each reservation. */
const GROUP = 'default';

export function instanceLine(i: InstanceReading): string {
  return row('INSTANCE', i.instanceId, i.imageId, i.instanceState.name, i.instanceType, i.launchTime,
    i.placement.availabilityZone, i.nodeHost, i.migrationState, i.migrationSource, i.migrationDestination);
}

export function reservationLines(r: ReservationReading): string[] {
  return [row('RESERVATION', r.reservationId, r.ownerId, GROUP), ...r.instancesSet.map(instanceLine)];
}

/** StartInstances: `INSTANCE id previous-state current-state node`. */
export function startLines(t: Reading<'StartInstances'>): string[] {
  return t.instancesSet.map((i) => row('INSTANCE', i.instanceId, i.previousState.name, i.currentState.name, i.nodeHost));
}

/** TerminateInstances and StopInstances: `INSTANCE id previous-state current-state`. */
export function terminateLines(t: Reading<'TerminateInstances'> | Reading<'StopInstances'>): string[] {
  return t.instancesSet.map((i) => row('INSTANCE', i.instanceId, i.previousState.name, i.currentState.name));
}

/** PauseInstances / UnpauseInstances: `INSTANCE id state paused|unpaused node was-paused|was-unpaused`. */
export function pauseLines(t: Reading<'PauseInstances'>): string[] {
  return t.instancesSet.map((i) => row(
    'INSTANCE', i.instanceId, i.currentState.name, i.paused ? 'paused' : 'unpaused', i.nodeHost, i.previouslyPaused ? 'was-paused' : 'was-unpaused',
  ));
}

export function zoneLines(z: Reading<'DescribeAvailabilityZones'>): string[] {
  return z.availabilityZoneInfo.map((i) => row('AVAILABILITYZONE', i.zoneName, i.zoneState));
}

export function matrixLines(rows: readonly MatrixReading[]): string[] {
  return [
    row('AVAILABILITYZONE', MATRIX_HEADER.label, MATRIX_HEADER.columns),
    ...rows.map((r) => row('AVAILABILITYZONE', matrixLabel(r), matrixColumns(r))),
  ];
}

/** stderr lines for partitions a describe had to leave out. */
export function unavailableWarnings(u: UnavailableReading): string[] {
  return u.map((p) => `warning: partition ${p.partition} is unavailable and not listed: ${p.reason}`);
}

/** euca2ools' VOLUME line: id, size, snapshot, zone, status, create time. */
export function volumeLine(v: Pick<VolumeReading, 'volumeId' | 'size' | 'snapshotId' | 'availabilityZone' | 'status' | 'createTime'>): string {
  return row('VOLUME', v.volumeId, v.size, v.snapshotId, v.availabilityZone, v.status, v.createTime);
}

/** euca2ools' ATTACHMENT line: volume, instance, device, status, attach time. */
export function attachmentLine(a: AttachmentReading): string {
  return row('ATTACHMENT', a.volumeId, a.instanceId, a.device, a.status, a.attachTime);
}

export function volumeLines(r: Reading<'DescribeVolumes'>): string[] {
  return r.volumeSet.flatMap((v) => [volumeLine(v), ...v.attachmentSet.map(attachmentLine)]);
}
