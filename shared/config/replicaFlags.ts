/**
 * The replica flags of the CLC and the CC (issue 21): with `--store etcd` several processes of one role
 * campaign through etcd; `--advertise-url` is what the others (and the callers they refuse) are told
 * when this one leads, `--leader-ttl-seconds` its lease. One place, so both daemons name and check them alike.
 */
import { z } from 'zod';
import { intFlag, type FlagField } from './flagTable.js';

export function isHttpOriginUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.pathname === '/' && u.search === '';
  } catch {
    return false;
  }
}

/** Schema fields, to spread into a daemon's z.object. */
export const replicaShape = {
  /** Absent: the daemon's own scheme://HOST:PORT. */
  advertiseUrl: z.string().refine(isHttpOriginUrl, 'must be an http(s)://host:port URL').transform((s) => new URL(s).origin).optional(),
  /** The leader's etcd lease, whole seconds; a replica takes over within about twice this after a leader dies. */
  leaderTtlSeconds: intFlag(10, 2, 600),
};

/** Cross-field rules, for the daemon's superRefine. */
export function checkReplicaFlags(r: { readonly store: string; readonly advertiseUrl?: string | undefined }, ctx: z.RefinementCtx): void {
  if (r.store !== 'etcd' && r.advertiseUrl !== undefined) ctx.addIssue({ code: 'custom', path: ['advertiseUrl'], message: 'needs --store etcd (replicas elect a leader through etcd)' });
}

export function replicaFields(envPrefix: string, what: string): FlagField[] {
  return [
    ['advertiseUrl', '--advertise-url <url>', `${envPrefix}_ADVERTISE_URL`, `with --store etcd: this replica's ${what} URL as the others name it when it leads (http://HOST:PORT)`],
    ['leaderTtlSeconds', '--leader-ttl-seconds <s>', `${envPrefix}_LEADER_TTL_SECONDS`, 'with --store etcd: the leader\'s etcd lease; another replica takes over within about twice this after the leader dies (10)'],
  ];
}
