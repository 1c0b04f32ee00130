/** Instances in EC2's XML shape (instancesSet items, reservationSet), with Ferry's extras appended. */
import type { InstanceState } from '../../../shared/protocol/common.js';
import { instanceTags } from '../../core/instanceTags.js';
import { INSTANCE_STATE_CODES, type InstanceView } from '../../core/instanceView.js';
import type { XmlObject } from '../xmlResponse.js';
import { tagSetItems } from './tagItems.js';

export function instanceStateXml(state: InstanceState): XmlObject {
  return { code: INSTANCE_STATE_CODES[state], name: state };
}

export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function instanceItem(v: InstanceView): XmlObject {
  return {
    instanceId: v.instanceId,
    imageId: v.imageId,
    instanceState: instanceStateXml(v.state),
    privateDnsName: '',
    dnsName: '',
    reason: '',
    amiLaunchIndex: v.launchIndex,
    productCodes: [],
    instanceType: v.instanceType,
    launchTime: isoTime(v.launchTime),
    placement: { availabilityZone: v.partition, groupName: '', tenancy: 'default' },
    monitoring: { state: 'disabled' },
    clientToken: v.clientToken,
    // Eucalyptus 4's system tags (where it runs, where it moves), which its admin tools read.
    tagSet: tagSetItems(instanceTags(v)),
    // Eucalyptus/Ferry extras, after EC2's fields so EC2 clients read the rest unchanged.
    nodeHost: v.host,
    migrationState: v.migration.state,
    migrationSource: v.migration.source,
    migrationDestination: v.migration.destination,
    // Issue 18: true while an administrator holds it paused (instanceState stays running); absent otherwise.
    paused: v.paused,
  };
}

/** Groups instances by reservation, keeping the order of first appearance. */
export function reservationItems(views: readonly InstanceView[]): XmlObject[] {
  const groups = new Map<string, InstanceView[]>();
  for (const v of views) {
    const g = groups.get(v.reservationId);
    if (g) g.push(v);
    else groups.set(v.reservationId, [v]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0] as InstanceView;
    return { reservationId: first.reservationId, ownerId: first.ownerId, groupSet: [], instancesSet: g.map(instanceItem) };
  });
}
