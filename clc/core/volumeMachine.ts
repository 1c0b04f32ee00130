/**
 * The volume and attachment state machines (issue 18), EC2's states, as transition tables read top
 * to bottom (STYLE habits 1-2). Pure: a state and an event in, the next state out, or a coded
 * IncorrectState naming both. The CLC's volume operations (volumeOps.ts) take every step through
 * here, inside the store update that persists it, so an illegal move never reaches the store.
 */
import { ClcErrors } from './errors.js';
import type { AttachmentStatus } from '../../shared/protocol/volumes.js';

export type VolumeState =
  /** Recorded; the backend is making its storage. */
  | 'creating'
  /** Its storage exists and no instance holds it. */
  | 'available'
  /** Attached (or being attached or detached) to one instance: its attachment says how far. */
  | 'in-use'
  /** DeleteVolume accepted; the backend is removing its storage. */
  | 'deleting'
  /** Gone: the record leaves the store with this step (DescribeVolumes then says InvalidVolume.NotFound). */
  | 'deleted'
  /** The backend failed to make or remove its storage; only DeleteVolume moves it on. */
  | 'error';

export const VOLUME_STATES: readonly VolumeState[] = Object.freeze(['creating', 'available', 'in-use', 'deleting', 'deleted', 'error']);

export type VolumeEvent =
  /** The backend made its storage. */
  | 'created'
  /** The backend could not. */
  | 'createFailed'
  /** AttachVolume was accepted (the attachment starts `attaching`). */
  | 'attach'
  /** Its attachment ended: refused by the node, or detached. */
  | 'released'
  /** DeleteVolume was accepted. */
  | 'delete'
  /** The backend removed its storage. */
  | 'deleted'
  /** The backend could not. */
  | 'deleteFailed';

export interface Row<S, E> {
  readonly from: S;
  readonly event: E;
  readonly to: S;
  /** What the move means, for docs and refusals. */
  readonly note: string;
}

export const VOLUME_TRANSITIONS: readonly Row<VolumeState, VolumeEvent>[] = Object.freeze([
  { from: 'creating', event: 'created', to: 'available', note: 'CreateVolume: the backend made its storage' },
  { from: 'creating', event: 'createFailed', to: 'error', note: 'the backend could not make it' },
  { from: 'available', event: 'attach', to: 'in-use', note: 'AttachVolume accepted (attachment attaching)' },
  { from: 'in-use', event: 'released', to: 'available', note: 'the attachment ended (detached, or the attach was refused)' },
  { from: 'available', event: 'delete', to: 'deleting', note: 'DeleteVolume accepted' },
  { from: 'error', event: 'delete', to: 'deleting', note: 'DeleteVolume of a failed volume' },
  { from: 'deleting', event: 'delete', to: 'deleting', note: 'DeleteVolume again (a removal that did not finish)' },
  { from: 'deleting', event: 'deleted', to: 'deleted', note: 'the backend removed it; the record goes' },
  { from: 'deleting', event: 'deleteFailed', to: 'error', note: 'the backend could not remove it' },
]);

export type AttachmentEvent =
  /** The node attached it and persisted the attachment. */
  | 'attachConfirmed'
  /** The node refused the attach outright: nothing was attached. */
  | 'attachRefused'
  /** DetachVolume accepted. */
  | 'detach'
  /** DetachVolume with Force of an attachment that never confirmed (or is stuck detaching). */
  | 'forceDetach'
  /** The node let it go (or no node holds the instance any more). */
  | 'detachConfirmed'
  /** The node refused the detach outright: it stays attached. */
  | 'detachRefused'
  /**
   * Host HA restarts its instance elsewhere (issue 18 part 4): the fenced host lost it at the storage
   * level, and it is attached again to the new copy.
   */
  | 'fenced';

export const ATTACHMENT_TRANSITIONS: readonly Row<AttachmentStatus, AttachmentEvent>[] = Object.freeze([
  { from: 'attaching', event: 'attachConfirmed', to: 'attached', note: 'the NC attached it and persisted it' },
  { from: 'attaching', event: 'attachRefused', to: 'detached', note: 'a coded refusal: nothing was attached' },
  { from: 'attached', event: 'detach', to: 'detaching', note: 'DetachVolume accepted' },
  { from: 'attached', event: 'forceDetach', to: 'detaching', note: 'DetachVolume with Force' },
  { from: 'attaching', event: 'forceDetach', to: 'detaching', note: 'Force: an attach that never answered' },
  { from: 'detaching', event: 'detach', to: 'detaching', note: 'a detach that got no answer, again' },
  { from: 'detaching', event: 'forceDetach', to: 'detaching', note: 'Force: a detach that got no answer, again' },
  { from: 'detaching', event: 'detachConfirmed', to: 'detached', note: 'the NC let it go; the attachment leaves the record' },
  { from: 'detaching', event: 'detachRefused', to: 'attached', note: 'a coded refusal: still attached' },
  { from: 'attached', event: 'fenced', to: 'attaching', note: 'host HA: fenced from the dead host, re-attached to the copy restarted elsewhere' },
  { from: 'attaching', event: 'fenced', to: 'attaching', note: 'host HA: a re-attach to the restarted copy, again' },
]);

function step<S extends string, E extends string>(table: readonly Row<S, E>[], state: S, event: E): S | undefined {
  return table.find((r) => r.from === state && r.event === event)?.to;
}

/** The volume's next state; IncorrectState when the table has no such move. */
export function stepVolume(volumeId: string, state: VolumeState, event: VolumeEvent): VolumeState {
  const next = step(VOLUME_TRANSITIONS, state, event);
  if (next === undefined) throw ClcErrors.make('IncorrectState', { volumeId, state, detail: `${describeVolumeEvent(event)} is not possible in this state` });
  return next;
}

/** The attachment's next status; IncorrectState (naming the attachment's status) when the table has no such move. */
export function stepAttachment(volumeId: string, status: AttachmentStatus, event: AttachmentEvent): AttachmentStatus {
  const next = step(ATTACHMENT_TRANSITIONS, status, event);
  if (next === undefined) throw ClcErrors.make('IncorrectState', { volumeId, state: `in-use (${status})`, detail: `${describeAttachmentEvent(event)} is not possible while the attachment is ${status}` });
  return next;
}

function describeVolumeEvent(e: VolumeEvent): string {
  switch (e) {
    case 'attach': return 'attaching it';
    case 'delete': return 'deleting it';
    default: return `the step '${e}'`;
  }
}

function describeAttachmentEvent(e: AttachmentEvent): string {
  switch (e) {
    case 'detach': return 'detaching it';
    case 'forceDetach': return 'a forced detach';
    default: return `the step '${e}'`;
  }
}
