/** Nodes and services in Eucalyptus's shapes (DescribeServices' serviceStatuses, DescribeNodes' nodeSet). */
import { CC_PATH } from '../../../shared/wire/transport.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import type { CcNode } from '../../../shared/protocol/ccProtocol.js';
import { isStaleNode, nodeServiceState, serviceFullName, serviceUuid, type ServiceState, type ServiceType } from '../../core/services.js';
import type { XmlObject } from '../xmlResponse.js';
import { isoTime } from './instanceItems.js';

export interface ServiceStatus {
  readonly type: ServiceType;
  readonly partition: string;
  readonly name: string;
  /** The machine the service runs on: a node's address, the CC endpoint's host, the CLC's own host. */
  readonly host: string;
  /** Where the service is reached; absent when the CLC does not know (a node: only its CC knows the NC port). */
  readonly uri?: string;
  readonly state: ServiceState;
  readonly details: readonly string[];
  /** A node's last contact with its CC (epoch ms, 0 if none), for the events ShowEvents asks for. */
  readonly lastSeen?: number;
}

/** What Eucalyptus's ServiceId says for a service without a uri. */
export const NO_URI = 'none';

/**
 * Eucalyptus 4 stamps every service with its topology epoch, which moves when the set of enabled
 * services changes. Ferry keeps no topology epoch: every service reports 0.
 */
export const LOCAL_EPOCH = 0;

export function nodeServiceStatus(node: CcNode): ServiceStatus {
  const s = nodeServiceState(node);
  return {
    type: 'node', partition: node.partition, name: node.host, host: node.host, state: s.state, details: s.details, lastSeen: node.lastSeen,
    ...(node.uri !== undefined ? { uri: node.uri } : {}),
  };
}

export function clusterServiceStatus(partition: string, endpoint: string, failure: FerryError | undefined): ServiceStatus {
  return {
    type: 'cluster', partition, name: partition, host: new URL(endpoint).hostname, uri: `${endpoint}${CC_PATH}`,
    state: failure ? 'NOTREADY' : 'ENABLED', details: failure ? [failure.message] : [],
  };
}

export interface ServiceStatusOptions {
  /** ShowEvents: list what the CLC knows of why a service is not ENABLED, as observed at `at` (epoch ms). */
  readonly events?: { readonly at: number };
}

/** Eucalyptus's fault severities for what a service's state says: out of service, or set aside on purpose. */
function severityOf(state: ServiceState): string {
  return state === 'NOTREADY' ? 'ERROR' : 'INFO';
}

function statusDetails(s: ServiceStatus, fullName: string, at: number): XmlObject[] {
  if (s.state === 'ENABLED') return [];
  const heard = s.lastSeen === undefined ? '' : s.lastSeen > 0 ? `; last heard from at ${isoTime(s.lastSeen)}` : '; never heard from';
  return s.details.map((d) => {
    const message = s.state === 'NOTREADY' ? `${d}${heard}` : d;
    return {
      severity: severityOf(s.state), uuid: serviceUuid(`${fullName}#${message}`), message,
      serviceFullName: fullName, serviceName: s.name, serviceHost: s.host, stackTrace: '', timestamp: isoTime(at),
    };
  });
}

/** Eucalyptus 4's ServiceStatusType: the service id, state, epoch, details, events and (no) service accounts. */
export function serviceStatusItem(s: ServiceStatus, opts: ServiceStatusOptions = {}): XmlObject {
  const fullName = serviceFullName(s.partition, s.type, s.name);
  return {
    serviceId: {
      uuid: serviceUuid(fullName), partition: s.partition, name: s.name, type: s.type, fullName,
      uris: s.uri === undefined ? [] : [s.uri], uri: s.uri ?? NO_URI, host: s.host,
    },
    localState: s.state,
    localEpoch: LOCAL_EPOCH,
    details: s.details,
    statusDetails: opts.events ? statusDetails(s, fullName, opts.events.at) : [],
    serviceAccounts: [],
  };
}

/** A node's quarantine (issue 18) as flat fields: whether, since when ('' if not) and why. */
export function quarantineFields(q: CcNode['quarantine'], prefix = ''): XmlObject {
  const name = (n: string): string => (prefix === '' ? n : `${prefix}${n[0]?.toUpperCase() ?? ''}${n.slice(1)}`);
  return { [name('quarantined')]: q !== undefined, [name('quarantinedSince')]: q ? isoTime(q.since) : '', [name('quarantineReason')]: q?.reason ?? '' };
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
    // The CC had no current word from the node: state, resources and instances are as of lastSeen.
    stale: isStaleNode(node),
    // Issue 18: true while an administrator holds the node in quarantine, since when and why.
    ...quarantineFields(node.quarantine),
    capacity: resourcesXml(node.capacity),
    used: resourcesXml(node.used),
    instancesSet: node.instances.map((i) => ({
      instanceId: i.instanceId, state: i.state, instanceType: i.vmType.name, migrationState: i.migrationState,
      migrationSource: moves.get(i.instanceId)?.source, migrationDestination: moves.get(i.instanceId)?.destination,
      paused: i.paused,
    })),
  };
}

/** Partitions that did not answer a describe, so clients can say so (the log says it too). */
export function unavailableItems(unavailable: ReadonlyMap<string, FerryError>): XmlObject[] {
  return [...unavailable].map(([partition, err]) => ({ partition, reason: err.message }));
}
