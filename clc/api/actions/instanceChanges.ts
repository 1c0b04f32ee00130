/**
 * What the requests that change named instances share (TerminateInstances, Stop/Start/Reboot,
 * Pause/Unpause): the partitions they claim in the change gate, and the gate's label naming them.
 */
import { partitionNames } from '../../clusters/clusters.js';
import type { ActionContext } from '../action.js';

/** The partitions the ids are recorded in (instances never leave their partition), or every one for an id without a record. */
export function claimedPartitions(ctx: ActionContext, ids: readonly string[]): string[] {
  const records = ctx.store.read().instances;
  const all = partitionNames(ctx.clusters);
  if (!ids.every((id) => records[id] !== undefined)) return all;
  return [...new Set(ids.map((id) => records[id]?.partition as string))].filter((p) => all.includes(p));
}

/** At most this many ids are named in the gate's label. */
const LABEL_IDS = 3;

/** `<action> of i-1, i-2, i-3 and N more`: what a waiting request is, in the gate's log and refusals. */
export function changeLabel(action: string, ids: readonly string[]): string {
  const more = ids.length > LABEL_IDS ? ` and ${ids.length - LABEL_IDS} more` : '';
  return `${action} of ${ids.slice(0, LABEL_IDS).join(', ')}${more}`;
}
