/**
 * The instances the admin sees: the CLC's records joined with what the CCs report. Pure. Live data
 * wins (the NCs are the truth); records say what happened to instances no CC reports any more.
 */
import type { InstanceState, MigrationState } from '../../shared/protocol/common.js';
import type { CcInstance } from '../../shared/protocol/ccProtocol.js';
import type { InstanceRecord } from '../state/clcStore.js';
import { byCodeUnits } from './codeUnits.js';
import type { Tag } from './userTags.js';

/** EC2's instance state codes. */
export const INSTANCE_STATE_CODES: Readonly<Record<InstanceState, number>> = Object.freeze({
  pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopped: 80,
});

export interface MigrationView {
  readonly state: MigrationState;
  /** While the instance is in an unfinished migration plan: the hosts it moves between. */
  readonly source?: string;
  readonly destination?: string;
}

export interface InstanceView {
  readonly instanceId: string;
  readonly reservationId: string;
  readonly ownerId: string;
  readonly imageId: string;
  readonly instanceType: string;
  readonly state: InstanceState;
  readonly partition: string;
  /** The node it is on; undefined once no node reports it. */
  readonly host: string | undefined;
  /** Epoch ms. */
  readonly launchTime: number;
  readonly launchIndex: number;
  readonly migration: MigrationView;
  /** True when a CC reports it now; false for a record no node reports any more (shown terminated). */
  readonly reported: boolean;
  /** The ClientToken it was launched with (EC2's clientToken), when one was given. */
  readonly clientToken?: string;
  /** Its user tags (CreateTags, RunInstances' TagSpecification), in key order; absent when none. */
  readonly userTags?: readonly Tag[];
  /** Paused by an administrator (PauseInstances, issue 18): its state stays `running` (EC2 has no paused state). */
  readonly paused?: true;
}

export interface MergedInstances {
  /** Sorted by launch time, reservation, launch index. */
  readonly views: readonly InstanceView[];
  /** Recorded instances whose partition did not answer: instanceId → partition. */
  readonly unknown: ReadonlyMap<string, string>;
}

function migrationOf(i: CcInstance): MigrationView {
  // The CC sends '' for "not moving"; answers from before live migration leave the fields out.
  const source = i.migrationSource || undefined;
  const destination = i.migrationDestination || undefined;
  return { state: i.migrationState, ...(source !== undefined ? { source } : {}), ...(destination !== undefined ? { destination } : {}) };
}

/**
 * Whether the instance is in an unfinished migration: its NC says so, or the CC lists it in a plan
 * item that has not finished (a queued item's instance still says `none`).
 */
export function isMigrating(v: InstanceView): boolean {
  return v.migration.state !== 'none' || v.migration.destination !== undefined;
}

/**
 * What only the CLC's record of an instance says about it; and, for an instance an NC re-adopted
 * after losing its store (`adopted`: its reservation, owner, launch time and VM type name are the
 * NC's placeholders), those too.
 */
export type RecordedFacts = Pick<InstanceRecord, 'launchIndex' | 'clientToken' | 'userTags'>
  & Partial<Pick<InstanceRecord, 'reservationId' | 'ownerId' | 'launchTime' | 'vmType'>>;

/** What the record adds to a view: the client token and user tags when there are any. */
function recordedExtras(r: RecordedFacts | undefined): Pick<InstanceView, 'clientToken' | 'userTags'> {
  return {
    ...(r?.clientToken !== undefined ? { clientToken: r.clientToken } : {}),
    ...(r?.userTags !== undefined && r.userTags.length > 0 ? { userTags: r.userTags } : {}),
  };
}

/** The view of an instance as its CC reports it, with what its record (if any) adds. */
export function viewOfCcInstance(i: CcInstance, recorded: RecordedFacts | undefined): InstanceView {
  const known = i.adopted === true ? recorded : undefined;
  return {
    instanceId: i.instanceId,
    reservationId: known?.reservationId ?? i.reservationId,
    ownerId: known?.ownerId ?? i.ownerId,
    imageId: i.imageId,
    instanceType: known?.vmType ?? i.vmType.name,
    state: i.state,
    partition: i.partition,
    host: i.host,
    launchTime: known?.launchTime ?? i.launchTime,
    launchIndex: recorded?.launchIndex ?? 0,
    migration: migrationOf(i),
    reported: true,
    ...recordedExtras(recorded),
    ...(i.paused === true ? { paused: true as const } : {}),
  };
}

/** An instance as only its record knows it (no node reports it): shown terminated unless the caller knows better. */
export function viewOfRecord(r: InstanceRecord): InstanceView {
  return {
    instanceId: r.instanceId,
    reservationId: r.reservationId,
    ownerId: r.ownerId,
    imageId: r.imageId,
    instanceType: r.vmType,
    state: 'terminated',
    partition: r.partition,
    host: undefined,
    launchTime: r.launchTime,
    launchIndex: r.launchIndex,
    migration: { state: 'none' },
    reported: false,
    ...recordedExtras(r),
  };
}

export { byCodeUnits } from './codeUnits.js';

/** What places an instance in DescribeInstances' order (and in a page cursor). */
export type InstanceOrderKey = Pick<InstanceView, 'launchTime' | 'reservationId' | 'launchIndex' | 'instanceId'>;

export function compareViews(a: InstanceOrderKey, b: InstanceOrderKey): number {
  return a.launchTime - b.launchTime
    || byCodeUnits(a.reservationId, b.reservationId)
    || a.launchIndex - b.launchIndex
    || byCodeUnits(a.instanceId, b.instanceId);
}

const isGone = (state: string): boolean => state === 'terminated' || state === 'shutting-down';

/** What a partition's CC answered to ccDescribeInstances. */
export interface PartitionReport {
  readonly instances: readonly CcInstance[];
  /** False when the CC could not see every node: absence from `instances` then proves nothing. */
  readonly complete?: boolean;
}

/** The instance lists of the partitions that answered, and those whose answer was incomplete. */
export function liveInstances(answers: ReadonlyMap<string, PartitionReport>): {
  live: Map<string, readonly CcInstance[]>;
  incomplete: Set<string>;
} {
  return {
    live: new Map([...answers].map(([p, r]) => [p, r.instances])),
    incomplete: new Set([...answers].filter(([, r]) => r.complete === false).map(([p]) => p)),
  };
}

/**
 * @param live instances reported by each partition that answered
 * @param incomplete partitions whose CC could not see every node
 * Records in a partition that did not answer (or is no longer configured) are `unknown`: neither
 * shown nor called missing; so is a launched record its partition does not report while that
 * partition's answer is incomplete (the instance may run on the node the CC cannot see). A launched
 * record a complete answer does not report is terminated. A `requested` record no CC reports was
 * never acknowledged: left out.
 */
export function mergeInstances(
  records: Readonly<Record<string, InstanceRecord>>,
  live: ReadonlyMap<string, readonly CcInstance[]>,
  incomplete: ReadonlySet<string> = new Set(),
): MergedInstances {
  const views = new Map<string, InstanceView>();
  for (const list of live.values()) {
    for (const i of list) {
      const r = records[i.instanceId];
      const next = viewOfCcInstance(i, r);
      // A copy being destroyed never hides a live one another CC reports.
      const prev = views.get(i.instanceId);
      if (prev && isGone(next.state) && !isGone(prev.state)) continue;
      views.set(i.instanceId, next);
    }
  }
  const unknown = new Map<string, string>();
  for (const r of Object.values(records)) {
    if (views.has(r.instanceId)) continue;
    if (!live.has(r.partition)) unknown.set(r.instanceId, r.partition);
    else if (r.phase === 'launched' && incomplete.has(r.partition)) unknown.set(r.instanceId, r.partition);
    else if (r.phase === 'launched') views.set(r.instanceId, viewOfRecord(r));
  }
  return { views: [...views.values()].sort(compareViews), unknown };
}
