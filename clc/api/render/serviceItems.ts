/** Nodes and services in Eucalyptus's shapes (DescribeServices' serviceStatuses, DescribeNodes' nodeSet). */
import type { FerryError } from '../../../shared/errors/registry.js';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';
import { nodeServiceState, serviceFullName, type ServiceState, type ServiceType } from '../../core/services.js';
import type { XmlObject } from '../xmlResponse.js';
import { isoTime } from './instanceItems.js';

export interface ServiceStatus {
  readonly type: ServiceType;
  readonly partition: string;
  readonly name: string;
  readonly uri?: string;
  readonly state: ServiceState;
  readonly details: readonly string[];
}

export function nodeServiceStatus(node: CcNode): ServiceStatus {
  const s = nodeServiceState(node);
  return { type: 'node', partition: node.partition, name: node.host, state: s.state, details: s.details };
}

export function clusterServiceStatus(partition: string, endpoint: string, failure: FerryError | undefined): ServiceStatus {
  return {
    type: 'cluster', partition, name: partition, uri: endpoint,
    state: failure ? 'NOTREADY' : 'ENABLED', details: failure ? [failure.message] : [],
  };
}

export function serviceStatusItem(s: ServiceStatus): XmlObject {
  return {
    serviceId: { partition: s.partition, name: s.name, type: s.type, fullName: serviceFullName(s.partition, s.type, s.name), uri: s.uri },
    localState: s.state,
    details: s.details,
  };
}

function resourcesXml(r: CcNode['capacity']): XmlObject {
  return { cores: r.cores, memoryMiB: r.memoryMiB, diskGiB: r.diskGiB };
}

/** Where an instance on a node moves, as ccDescribeInstances lists it (absent: not moving, or not known). */
export interface InstanceMove {
  readonly source?: string;
  readonly destination?: string;
}

export function nodeItem(node: CcNode, moves: ReadonlyMap<string, InstanceMove> = new Map()): XmlObject {
  const s = nodeServiceState(node);
  return {
    partition: node.partition,
    host: node.host,
    state: s.state,
    nodeState: node.nodeState,
    reachable: node.reachable,
    healthy: node.healthy,
    lastSeen: node.lastSeen > 0 ? isoTime(node.lastSeen) : '',
    capacity: resourcesXml(node.capacity),
    used: resourcesXml(node.used),
    instancesSet: node.instances.map((i) => ({
      instanceId: i.instanceId, state: i.state, instanceType: i.vmType.name, migrationState: i.migrationState,
      migrationSource: moves.get(i.instanceId)?.source, migrationDestination: moves.get(i.instanceId)?.destination,
    })),
  };
}

/** Partitions that did not answer a describe, so clients can say so (the log says it too). */
export function unavailableItems(unavailable: ReadonlyMap<string, FerryError>): XmlObject[] {
  return [...unavailable].map(([partition, err]) => ({ partition, reason: err.message }));
}
