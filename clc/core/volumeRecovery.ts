/**
 * What a CLC that starts does with a volume its predecessor left in flight (issue 18): killed
 * between recording a step and finishing it, the CLC leaves a volume `creating` or `deleting`, or an
 * attachment `attaching` or `detaching`, that no request would ever move on. Each is resolved from
 * what the storage and the nodes show, never from what the dead process meant to do (level-based,
 * as a reconcile loop). Pure: the volume and the evidence in, one step out; the runner
 * (volumeRecoveryRunner.ts) takes the steps through volumeMachine.ts inside store updates.
 *
 *   creating   the backend's create is idempotent (a file of the right size answers its path):
 *              create again; made → available, refused → error (EC2's state for a failed create).
 *   deleting   remove again (idempotent); done → the record goes, refused → error.
 *   attaching  the instance's node reports the volume attached → attached; reports the instance
 *              without it, or no node holds the instance → detached (nothing was attached).
 *   detaching  the node reports it attached → attached (the detach never happened; ask again);
 *              reports the instance without it, or no node holds the instance → detached.
 * A node that is itself between steps (its record says attaching / detaching), a partition that did
 * not answer or answered incompletely, and a re-attach host HA owns (fencedFrom) wait for a later pass.
 */
import type { AttachmentStatus } from '../../shared/protocol/volumes.js';
import type { AttachmentEvent } from './volumeMachine.js';
import type { VolumeRecord } from './volumeRecords.js';

/** What the nodes show of the instance a volume's attachment names. */
export type NodeEvidence =
  /** Its partition did not answer, or not for every node: nothing can be told now. */
  | { readonly kind: 'unknown' }
  /** No node holds a live copy (never reported, or terminated). */
  | { readonly kind: 'gone' }
  /** Its node reports it; `status` is the volume's attachment there (undefined: not attached). */
  | { readonly kind: 'held'; readonly host: string; readonly status: AttachmentStatus | undefined };

export type RecoveryStep =
  /** Nothing in flight. */
  | { readonly kind: 'none' }
  | { readonly kind: 'finish-create' }
  | { readonly kind: 'finish-delete' }
  /** One attachment step, and why (for the log). */
  | { readonly kind: 'settle'; readonly event: AttachmentEvent; readonly why: string }
  /** Cannot be told yet: look again on the next pass. */
  | { readonly kind: 'wait'; readonly why: string };

/** Whether the volume is in one of the states a crash can leave behind. */
export function inFlight(v: Pick<VolumeRecord, 'state' | 'attachment'>): boolean {
  return v.state === 'creating' || v.state === 'deleting' || v.attachment?.status === 'attaching' || v.attachment?.status === 'detaching';
}

interface Row {
  readonly status: 'attaching' | 'detaching';
  /** The node's word for the volume: attached, not attached (absent or detached), or between steps. */
  readonly node: 'attached' | 'absent' | 'moving';
  readonly step: RecoveryStep;
}

/** The attachment table, read top to bottom ('gone' reads as 'absent'). */
export const ATTACHMENT_RECOVERY: readonly Row[] = Object.freeze([
  { status: 'attaching', node: 'attached', step: { kind: 'settle', event: 'attachConfirmed', why: 'its node holds it attached' } },
  { status: 'attaching', node: 'absent', step: { kind: 'settle', event: 'attachRefused', why: 'its node does not hold it: nothing was attached' } },
  { status: 'attaching', node: 'moving', step: { kind: 'wait', why: 'its node is between steps' } },
  { status: 'detaching', node: 'attached', step: { kind: 'settle', event: 'detachRefused', why: 'its node still holds it attached: the detach never happened' } },
  { status: 'detaching', node: 'absent', step: { kind: 'settle', event: 'detachConfirmed', why: 'its node let it go' } },
  { status: 'detaching', node: 'moving', step: { kind: 'wait', why: 'its node is between steps' } },
] as const);

function nodeWord(e: NodeEvidence): Row['node'] | undefined {
  if (e.kind === 'unknown') return undefined;
  if (e.kind === 'gone' || e.status === undefined || e.status === 'detached') return 'absent';
  return e.status === 'attached' ? 'attached' : 'moving';
}

export function recoveryStep(v: Pick<VolumeRecord, 'state' | 'attachment'>, node: NodeEvidence): RecoveryStep {
  if (v.state === 'creating') return { kind: 'finish-create' };
  if (v.state === 'deleting') return { kind: 'finish-delete' };
  const a = v.attachment;
  if (!a || (a.status !== 'attaching' && a.status !== 'detaching')) return { kind: 'none' };
  // Host HA's restart elsewhere re-attaches it (volumeFencing.ts) and resumes that after a restart itself.
  if (a.status === 'attaching' && a.fencedFrom !== undefined) return { kind: 'wait', why: 'host HA re-attaches it to the restarted copy' };
  const word = nodeWord(node);
  if (word === undefined) return { kind: 'wait', why: 'its partition did not answer for every node' };
  const gone = node.kind === 'gone';
  const row = ATTACHMENT_RECOVERY.find((r) => r.status === a.status && r.node === word);
  if (!row) return { kind: 'wait', why: 'no rule' };
  if (gone && row.step.kind === 'settle') return { ...row.step, why: 'no node holds its instance' };
  return row.step;
}
