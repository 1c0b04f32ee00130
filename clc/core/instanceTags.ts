/**
 * An instance's tags: Eucalyptus 4's system tags, computed from the live view and never stored
 * (where an instance runs and, while it moves, between which hosts; Eucalyptus's CLC wrote them as
 * tags, VmInstance.VM_NC_HOST_TAG and MigrationTags, and its admin tools read them back from
 * `tagSet`: euserv-describe-node-controllers reads `euca:node` and
 * `euca:node:migration:destination`), beside the user tags stored on its record
 * (clc/core/userTags.ts). Pure.
 */
import { isMigrating, type InstanceView } from './instanceView.js';
import { sortTags, type Tag } from './userTags.js';

export type { Tag } from './userTags.js';

export const NODE_TAG = 'euca:node';
export const MIGRATION_STATE_TAG = 'euca:node:migration:state';
export const MIGRATION_SOURCE_TAG = 'euca:node:migration:source';
export const MIGRATION_DESTINATION_TAG = 'euca:node:migration:destination';

/**
 * The instance's system tags, by key. A terminated instance has none: Eucalyptus clears them at
 * teardown (VmInstances' clearNodeTag), and a tombstone its node still reports runs nowhere.
 */
export function systemTags(v: InstanceView): readonly Tag[] {
  if (v.state === 'terminated') return [];
  const tags: Tag[] = [];
  if (v.host !== undefined) tags.push({ key: NODE_TAG, value: v.host });
  if (isMigrating(v)) {
    if (v.migration.destination !== undefined) tags.push({ key: MIGRATION_DESTINATION_TAG, value: v.migration.destination });
    if (v.migration.source !== undefined) tags.push({ key: MIGRATION_SOURCE_TAG, value: v.migration.source });
    // Eucalyptus wrote the state tag only while the NC's state was not `none` (a queued plan item's still is).
    if (v.migration.state !== 'none') tags.push({ key: MIGRATION_STATE_TAG, value: v.migration.state });
  }
  return tags;
}

/**
 * Every tag of the instance, system and user, by key (code-unit order, the order DescribeTags pages
 * in). User tags outlive termination, as EC2 keeps a terminated instance's tags while it is listed.
 * No user key can start with `euca:`; should one ever, the computed tag wins.
 */
export function instanceTags(v: InstanceView): readonly Tag[] {
  const system = systemTags(v);
  if (v.userTags === undefined || v.userTags.length === 0) return system;
  const taken = new Set(system.map((t) => t.key));
  return sortTags([...system, ...v.userTags.filter((t) => !taken.has(t.key))]);
}
