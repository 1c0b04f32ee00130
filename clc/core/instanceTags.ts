/**
 * Eucalyptus 4's system tags on instances, computed from the live view and never stored: where an
 * instance runs and, while it moves, between which hosts. Eucalyptus's CLC wrote them as tags
 * (VmInstance.VM_NC_HOST_TAG, MigrationTags); its admin tools read them back from `tagSet`
 * (euserv-describe-node-controllers reads `euca:node` and `euca:node:migration:destination`). Pure.
 */
import { isMigrating, type InstanceView } from './instanceView.js';

export const NODE_TAG = 'euca:node';
export const MIGRATION_STATE_TAG = 'euca:node:migration:state';
export const MIGRATION_SOURCE_TAG = 'euca:node:migration:source';
export const MIGRATION_DESTINATION_TAG = 'euca:node:migration:destination';

export interface Tag {
  readonly key: string;
  readonly value: string;
}

/**
 * The instance's tags, by key (code-unit order, the order DescribeTags pages in). A terminated
 * instance has none: Eucalyptus clears them at teardown (VmInstances' clearNodeTag), and a
 * tombstone its node still reports runs nowhere.
 */
export function instanceTags(v: InstanceView): readonly Tag[] {
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
