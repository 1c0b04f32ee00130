/**
 * CC → NC epochs (issue 21): every NC command that changes something carries the sending CC leader's
 * epoch (its etcd election key's create revision, a decimal string) in the body field `leaderEpoch`;
 * a file-store CC (the one CC of its partition) sends "0". The NC keeps the highest it has seen and
 * refuses older ones (nc/leaderEpoch.ts), so a deposed CC leader cannot act on a node the new one has
 * reached. Reads (describe, an activity check) carry none. The field is outside each operation's
 * schema: the CC adds it to the encoded body (cc/epochStamp.ts), the NC reads it before parsing.
 */
import type { NcOp } from './ncProtocol.js';

export const LEADER_EPOCH_FIELD = 'leaderEpoch';

/** What a file-store CC sends, and what a command without the field counts as. */
export const NO_EPOCH = '0';

/** The NC operations that change something: these carry an epoch and are checked. */
export const NC_CHANGE_OPS: ReadonlySet<string> = new Set<NcOp>([
  'ncRunInstance', 'ncStartInstance', 'ncStopInstance', 'ncRebootInstance', 'ncPauseInstance', 'ncTerminateInstance',
  'ncAttachVolume', 'ncDetachVolume', 'ncModifyNode', 'ncQuarantineNode', 'ncMigrateInstances',
]);

/** An epoch as carried: a decimal string of at most 20 digits (etcd's revision is an int64). */
export function isEpoch(v: string): boolean {
  return /^[0-9]{1,20}$/.test(v);
}

/** The epoch a body carries: absent counts as NO_EPOCH; undefined when the field is there but not an epoch. */
export function carriedEpoch(body: Readonly<Record<string, unknown>>): string | undefined {
  const v = body[LEADER_EPOCH_FIELD];
  if (v === undefined || v === null) return NO_EPOCH;
  const s = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v;
  return typeof s === 'string' && isEpoch(s) ? s : undefined;
}
