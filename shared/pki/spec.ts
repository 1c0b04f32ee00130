/**
 * What ferry-init is asked to issue, validated once (STYLE habit 7): the cloud's id and one entry
 * per component. Pure: no keys, no files.
 */
import { isIPv4 } from 'node:net';
import { PkiErrors } from './errors.js';

/** The tiers a certificate can speak for; carried in the subject's OU. */
export const PEER_ROLES = ['clc', 'cc', 'nc'] as const;
export type PeerRole = (typeof PEER_ROLES)[number];

export function isPeerRole(s: unknown): s is PeerRole {
  return typeof s === 'string' && (PEER_ROLES as readonly string[]).includes(s);
}

export interface ComponentSpec {
  readonly role: PeerRole;
  /** IPv4 address the component listens on and calls from: the CN and the IP subjectAltName. */
  readonly host: string;
}

export interface CloudPkiSpec {
  /** Names the cloud in every subject (O=Ferry cloud <cloudId>). */
  readonly cloudId: string;
  readonly components: readonly ComponentSpec[];
}

export interface InitRequest {
  readonly cloudId: string;
  readonly clc?: string;
  /** `partition=host` entries; a CC certificate names its host, so partitions sharing a host share it. */
  readonly cc: readonly string[];
  /** Comma-separated NC hosts, possibly given several times. */
  readonly nc: readonly string[];
}

const CLOUD_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

function host(h: string, what: string): string {
  const t = h.trim();
  if (!isIPv4(t)) throw PkiErrors.make('InvalidPkiSpec', { detail: `${what}: ${JSON.stringify(h)} is not an IPv4 address` });
  return t;
}

/** Turns the command-line request into a spec; the same role and host listed twice is one entry. */
export function buildCloudPkiSpec(r: InitRequest): CloudPkiSpec {
  if (!CLOUD_ID.test(r.cloudId)) throw PkiErrors.make('InvalidPkiSpec', { detail: `cloud id ${JSON.stringify(r.cloudId)} must be 1-63 of [A-Za-z0-9._-]` });
  const out: ComponentSpec[] = [];
  const add = (role: PeerRole, h: string): void => {
    if (!out.some((c) => c.role === role && c.host === h)) out.push({ role, host: h });
  };
  if (r.clc !== undefined) add('clc', host(r.clc, '--clc'));
  for (const entry of r.cc) {
    const m = /^([^=]+)=(.+)$/.exec(entry);
    if (!m?.[2]) throw PkiErrors.make('InvalidPkiSpec', { detail: `--cc ${JSON.stringify(entry)}: expected partition=host` });
    add('cc', host(m[2], `--cc ${m[1] ?? ''}`));
  }
  for (const list of r.nc) {
    for (const h of list.split(',').map((s) => s.trim()).filter((s) => s !== '')) add('nc', host(h, '--nc'));
  }
  if (out.length === 0) throw PkiErrors.make('InvalidPkiSpec', { detail: 'nothing to issue: give --clc, --cc or --nc' });
  return Object.freeze({ cloudId: r.cloudId, components: Object.freeze(out) });
}
