/**
 * Eucalyptus service vocabulary for nodes and clusters: the state DescribeServices shows, the
 * service id (an ARN-like full name) EnableService/DisableService/ModifyService accept, Eucalyptus 4's
 * state and transition names, and what a service name given by an admin refers to. Pure.
 */
import { createHash } from 'node:crypto';
import { hostSchema } from '../../shared/protocol/common.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';

/**
 * ENABLED: serving and takes new instances.
 * DISABLED: maintenance mode, set by the admin; runs its instances, takes no new ones (a quarantined
 * node is DISABLED too, its details say so: Eucalyptus has no quarantine state, and its tools know these).
 * NOTREADY: cannot serve now (unreachable, not heard from yet, or its hypervisor is broken).
 */
export type ServiceState = 'ENABLED' | 'DISABLED' | 'NOTREADY';
export const SERVICE_STATES: readonly ServiceState[] = Object.freeze(['ENABLED', 'DISABLED', 'NOTREADY']);

export const SERVICE_TYPES = Object.freeze(['eucalyptus', 'cluster', 'node'] as const);
export type ServiceType = (typeof SERVICE_TYPES)[number];

/**
 * Eucalyptus 4's service states (Component.State), which ByState, the `state` filter and
 * ModifyService accept. Ferry's services are only ever in the three of ServiceState.
 */
export const EUCA_STATES = Object.freeze(['BROKEN', 'PRIMORDIAL', 'INITIALIZED', 'LOADED', 'STOPPED', 'NOTREADY', 'DISABLED', 'ENABLED'] as const);
export type EucaState = (typeof EUCA_STATES)[number];

/** Eucalyptus 4's named transitions (Topology.Transitions), the other half of what ModifyService's State takes. */
export const EUCA_TRANSITIONS = Object.freeze(['START', 'STOP', 'INITIALIZE', 'LOAD', 'DESTROY', 'ENABLE', 'DISABLE', 'CHECK', 'RESTART'] as const);
export type EucaTransition = (typeof EUCA_TRANSITIONS)[number];

export function isEucaState(s: string): s is EucaState {
  return (EUCA_STATES as readonly string[]).includes(s);
}

export function isEucaTransition(s: string): s is EucaTransition {
  return (EUCA_TRANSITIONS as readonly string[]).includes(s);
}

/** The name the CLC reports for itself, in the partition Eucalyptus gives its `eucalyptus` service. */
export const CLC_SERVICE_NAME = 'clc';
export const CLC_SERVICE_PARTITION = 'eucalyptus';

export interface NodeServiceStatus {
  readonly state: ServiceState;
  readonly details: readonly string[];
}

/**
 * Whether what the CC says of the node is its last known state rather than a current answer: the
 * CC's `stale` mark, or (from a CC without it) an unreachable node.
 */
export function isStaleNode(node: CcNode): boolean {
  return node.stale ?? !node.reachable;
}

/**
 * A node whose NC did not answer its CC in time keeps its last known state (a slow answer is not an
 * outage); the detail says the state is stale and from when. Unreachable is NOTREADY, as ever.
 */
export function nodeServiceState(node: CcNode): NodeServiceStatus {
  // A quarantine is named whatever else holds: a quarantined host that crashed is still quarantined (its last report says so).
  const quarantine = node.quarantine === undefined ? [] : [quarantineDetail(node.quarantine)];
  if (!node.reachable) return { state: 'NOTREADY', details: ['the cluster controller cannot reach this node', ...quarantine] };
  if (node.nodeState === 'unknown') return { state: 'NOTREADY', details: ['not heard from since the cluster controller started', ...quarantine] };
  const stale = isStaleNode(node) ? [`stale: its node controller did not answer the cluster controller in time; last known state, from ${new Date(node.lastSeen).toISOString()}`] : [];
  const lost = node.lostStore === undefined ? [] : [lostStoreDetail(node.lostStore)];
  if (!node.healthy) return { state: 'NOTREADY', details: ['the node cannot use its hypervisor', ...quarantine, ...lost, ...stale] };
  if (node.quarantine !== undefined) return { state: 'DISABLED', details: [...quarantine, ...lost, ...stale] };
  return node.nodeState === 'disabled'
    ? { state: 'DISABLED', details: ['maintenance mode: takes no new instances', ...lost, ...stale] }
    : { state: 'ENABLED', details: [...lost, ...stale] };
}

/** What a quarantine means for the node (issue 18), and what ends it. */
export function quarantineDetail(q: NonNullable<CcNode['quarantine']>): string {
  const why = q.reason === '' ? 'no reason given' : `reason: ${q.reason}`;
  return `quarantined by an administrator since ${new Date(q.since).toISOString()} (${why}): takes no instances, its instances move only when named; UnquarantineNode lifts it and leaves the node disabled`;
}

/** Why a node left service by itself after its NC lost nc.json, and what brings it back. */
export function lostStoreDetail(l: NonNullable<CcNode['lostStore']>): string {
  const adopted = l.adopted.length === 0 ? 'no instance to re-adopt' : `${l.adopted.length} instance(s) re-adopted from its hypervisor (${l.adopted.join(', ')})`;
  return `its node controller lost its state store (nc.json) and recreated it at ${new Date(l.detectedAt).toISOString()} (${l.evidence}); ${adopted}; it stays out of service until EnableService`;
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

/** Namespace of service uuids (a fixed random UUID): uuids are RFC 4122 version 5 of the full name in it. */
const SERVICE_UUID_NAMESPACE = Buffer.from('6b1f0c9e4d2a4f7a9a53e2d1c0b8f417', 'hex');

/** A stable uuid for a service (or anything named by a string): the same full name gives the same uuid on every CLC. */
export function serviceUuid(fullName: string): string {
  const h = createHash('sha1').update(SERVICE_UUID_NAMESPACE).update(fullName, 'utf8').digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** What an admin's service name refers to; a node's partition is known only when its full name was given. */
export type ServiceRef =
  | { readonly type: 'eucalyptus' }
  | { readonly type: 'cluster'; readonly partition: string }
  | { readonly type: 'node'; readonly host: string; readonly partition?: string };

/**
 * Resolves a service name (`clc`, a partition's name, a node's address) or a full name as
 * DescribeServices prints it against the configured `partitions`; undefined when it names nothing
 * this cloud can have. A node named by its address alone may still be absent: only its CC can say.
 */
export function resolveServiceName(name: string, partitions: readonly string[]): ServiceRef | undefined {
  const id = parseServiceFullName(name);
  if (id === undefined) {
    if (name === CLC_SERVICE_NAME) return { type: 'eucalyptus' };
    if (partitions.includes(name)) return { type: 'cluster', partition: name };
    return hostSchema.safeParse(name).success ? { type: 'node', host: name } : undefined;
  }
  if (id.type === 'eucalyptus') return id.partition === CLC_SERVICE_PARTITION && id.name === CLC_SERVICE_NAME ? { type: 'eucalyptus' } : undefined;
  if (!partitions.includes(id.partition)) return undefined;
  if (id.type === 'cluster') return id.name === id.partition ? { type: 'cluster', partition: id.partition } : undefined;
  if (id.type === 'node' && hostSchema.safeParse(id.name).success) return { type: 'node', host: id.name, partition: id.partition };
  return undefined;
}
