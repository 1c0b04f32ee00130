/** DescribeInstanceStatus items in EC2's XML shape. */
import type { CheckSummary, InstanceStatus } from '../../core/instanceStatus.js';
import type { XmlObject } from '../xmlResponse.js';
import { instanceStateXml } from './instanceItems.js';

function checkXml(c: CheckSummary): XmlObject {
  return { status: c.status, details: c.reachability === undefined ? [] : [{ name: 'reachability', status: c.reachability }] };
}

export function instanceStatusItem(s: InstanceStatus): XmlObject {
  return {
    instanceId: s.view.instanceId,
    availabilityZone: s.view.partition,
    eventsSet: s.events.map((e) => ({ code: e.code, description: e.description })),
    instanceState: instanceStateXml(s.view.state),
    systemStatus: checkXml(s.system),
    instanceStatus: checkXml(s.instance),
  };
}
