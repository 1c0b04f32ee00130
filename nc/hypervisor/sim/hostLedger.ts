/**
 * Pure bookkeeping of one simulated host: domain records, what they hold, admission, and the
 * activity records running domains write to shared storage. No I/O, no clock: `now` is a parameter.
 */
import { join } from 'node:path';
import type { DomainInfo, DomainSpec, DomainState, VolumeAttachmentSpec } from '../driver.js';
import { fits, sub, sum, type Resources } from '../../../shared/model/resources.js';

/** What a domain is doing besides its DomainState. */
export type DomainActivity =
  /** Nothing special: a plain domain. */
  | { readonly kind: 'idle' }
  /** Destination: resources held, waiting for the source's stream. The domain is paused. */
  | { readonly kind: 'incoming-prepared'; readonly migrationId: string }
  /** Destination: the stream is arriving. The domain stays paused until the final round. */
  | { readonly kind: 'incoming-receiving'; readonly migrationId: string }
  /**
   * Source: pre-copy rounds in flight; the domain keeps running (and writing), or stays suspended
   * (`suspended`: its administrator froze it before, so it dirties no page and arrives suspended).
   */
  | { readonly kind: 'outgoing-precopy'; readonly migrationId: string; readonly suspended?: boolean }
  /** Source: paused for the stop-and-copy round, waiting for the destination to confirm. */
  | { readonly kind: 'outgoing-switchover'; readonly migrationId: string; readonly suspended?: boolean };

export interface DomainRecord {
  readonly spec: DomainSpec;
  readonly state: DomainState;
  /** Epoch ms when the domain (last) started on this host; 0 if it never ran here. */
  readonly startedAt: number;
  readonly activity: DomainActivity;
  /** Volumes connected to it, in attach order; part of its persistent definition. Absent: none. */
  readonly volumes?: readonly VolumeAttachmentSpec[];
}

export const IDLE: DomainActivity = Object.freeze({ kind: 'idle' });

export function isIncoming(r: DomainRecord): boolean {
  return r.activity.kind === 'incoming-prepared' || r.activity.kind === 'incoming-receiving';
}

export function isOutgoing(r: DomainRecord): boolean {
  return r.activity.kind === 'outgoing-precopy' || r.activity.kind === 'outgoing-switchover';
}

/** A running, paused or suspended domain holds its resources (a paused QEMU keeps its memory); shutoff does not. */
export function holdsResources(r: DomainRecord): boolean {
  return isLive(r.state);
}

/** Whether a domain in this state has a QEMU (running, paused or suspended): a power cycle ends it. */
export function isLive(state: DomainState): boolean {
  return state === 'running' || state === 'paused' || state === 'suspended';
}

export function usedResources(records: Iterable<DomainRecord>): Resources {
  const held: Resources[] = [];
  for (const r of records) if (holdsResources(r)) held.push(r.spec.resources);
  return sum(held);
}

export function freeResources(capacity: Resources, records: Iterable<DomainRecord>): Resources {
  return sub(capacity, usedResources(records));
}

export type Admission = { readonly ok: true } | { readonly ok: false; readonly need: string; readonly free: string };

/** Whether `spec` fits next to what `records` already hold (records must not include it). */
export function admit(capacity: Resources, records: Iterable<DomainRecord>, spec: DomainSpec): Admission {
  const free = freeResources(capacity, records);
  if (fits(spec.resources, free)) return { ok: true };
  return { ok: false, need: describeResources(spec.resources), free: describeResources(clampZero(free)) };
}

function clampZero(r: Resources): Resources {
  return { cores: Math.max(0, r.cores), memoryMiB: Math.max(0, r.memoryMiB), diskGiB: Math.max(0, r.diskGiB) };
}

export function describeResources(r: Resources): string {
  return `${r.cores} cores/${r.memoryMiB} MiB/${r.diskGiB} GiB`;
}

/** Names the first difference between two specs, or undefined when they are the same. */
export function specDifference(a: DomainSpec, b: DomainSpec): string | undefined {
  if (a.id !== b.id) return `id ${a.id} vs ${b.id}`;
  if (a.imageId !== b.imageId) return `image ${a.imageId} vs ${b.imageId}`;
  const ra = a.resources;
  const rb = b.resources;
  if (ra.cores !== rb.cores || ra.memoryMiB !== rb.memoryMiB || ra.diskGiB !== rb.diskGiB) {
    return `resources ${describeResources(ra)} vs ${describeResources(rb)}`;
  }
  return undefined;
}

/** `<storageDir>/<host>/`: one directory per host on shared storage. */
export function hostDir(storageDir: string, host: string): string {
  return join(storageDir, host);
}

export function diskPath(storageDir: string, host: string, id: string): string {
  return join(hostDir(storageDir, host), `${id}.disk`);
}

export function heartbeatPath(storageDir: string, host: string): string {
  return join(hostDir(storageDir, host), 'heartbeat');
}

export function toDomainInfo(r: DomainRecord, path: string): DomainInfo {
  return {
    id: r.spec.id,
    state: r.state,
    resources: { ...r.spec.resources },
    imageId: r.spec.imageId,
    diskPath: path,
    startedAt: r.startedAt,
    volumes: (r.volumes ?? []).map((v) => ({ ...v })),
  };
}

/** What attaching `volume` to `id` would break, given every domain's volumes here; undefined: nothing (or a repeat). */
export function volumeConflict(records: Iterable<DomainRecord>, id: string, volume: VolumeAttachmentSpec): string | undefined {
  for (const r of records) {
    for (const v of r.volumes ?? []) {
      if (r.spec.id !== id && v.volumeId === volume.volumeId) return `volume ${volume.volumeId} is attached to domain ${r.spec.id}`;
      if (r.spec.id !== id) continue;
      if (v.volumeId === volume.volumeId && v.device !== volume.device) return `volume ${volume.volumeId} is attached as ${v.device}`;
      if (v.volumeId === volume.volumeId && v.path !== volume.path) return `volume ${volume.volumeId} is attached from ${v.path}`;
      if (v.volumeId !== volume.volumeId && v.device === volume.device) return `device ${volume.device} holds volume ${v.volumeId}`;
    }
  }
  return undefined;
}

/** What a running domain writes to its disk file each interval; its mtime is the activity signal. */
export interface DiskRecord {
  readonly id: string;
  readonly host: string;
  readonly counter: number;
  readonly writtenAt: number;
}

export interface HeartbeatRecord {
  readonly host: string;
  readonly writtenAt: number;
  readonly running: number;
}

export function encodeDiskRecord(r: DiskRecord): string {
  return `${JSON.stringify(r)}\n`;
}

/** Reads a disk record's counter back (after a restart); anything unreadable counts from 0. */
export function decodeDiskCounter(text: string | undefined): number {
  if (text === undefined) return 0;
  try {
    const v = (JSON.parse(text) as { counter?: unknown }).counter;
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0;
  } catch {
    return 0;
  }
}
