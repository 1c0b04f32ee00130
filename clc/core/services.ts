/**
 * Eucalyptus service vocabulary for nodes and clusters: the state DescribeServices shows and the
 * service id (an ARN-like full name) EnableService/DisableService accept. Pure.
 */
import type { CcNode } from '../../shared/protocol/ccProtocol.js';

/**
 * ENABLED: serving and takes new instances.
 * DISABLED: maintenance mode, set by the admin; runs its instances, takes no new ones.
 * NOTREADY: cannot serve now (unreachable, not heard from yet, or its hypervisor is broken).
 */
export type ServiceState = 'ENABLED' | 'DISABLED' | 'NOTREADY';
export const SERVICE_STATES: readonly ServiceState[] = Object.freeze(['ENABLED', 'DISABLED', 'NOTREADY']);

export const SERVICE_TYPES = Object.freeze(['eucalyptus', 'cluster', 'node'] as const);
export type ServiceType = (typeof SERVICE_TYPES)[number];

export interface NodeServiceStatus {
  readonly state: ServiceState;
  readonly details: readonly string[];
}

export function nodeServiceState(node: CcNode): NodeServiceStatus {
  if (!node.reachable) return { state: 'NOTREADY', details: ['the cluster controller cannot reach this node'] };
  if (node.nodeState === 'unknown') return { state: 'NOTREADY', details: ['not heard from since the cluster controller started'] };
  if (!node.healthy) return { state: 'NOTREADY', details: ['the node cannot use its hypervisor'] };
  return node.nodeState === 'disabled' ? { state: 'DISABLED', details: ['maintenance mode: takes no new instances'] } : { state: 'ENABLED', details: [] };
}

/** `arn:euca:eucalyptus:<partition>:<type>:<name>/`, after Eucalyptus 3's service full names. */
export function serviceFullName(partition: string, type: ServiceType, name: string): string {
  return `arn:euca:eucalyptus:${partition}:${type}:${name}/`;
}

export interface ParsedServiceId {
  readonly partition: string;
  readonly type: string;
  readonly name: string;
}

export function parseServiceFullName(s: string): ParsedServiceId | undefined {
  const m = /^arn:euca:eucalyptus:([^:/]+):([^:/]+):([^:/]+)\/$/.exec(s);
  if (!m) return undefined;
  return { partition: m[1] as string, type: m[2] as string, name: m[3] as string };
}
