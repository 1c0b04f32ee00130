/**
 * Sending to whichever replica leads (issue 21): a caller that knows several URLs of one service (the
 * CLC its partition's CC replicas, an NC its CC replicas) sends to the last one that answered, and when
 * a replica refuses with NotLeader it tries the leader that replica names (if it is one of the known
 * URLs), or the next URL; a refused connection (the request cannot have arrived) also moves on. Any other
 * failure is the caller's to handle, as with one URL. Each request tries every URL at most once.
 *
 * A NotLeader refusal names the leader in its message as `leader at <url>` (notLeaderText builds it,
 * namedLeaderOf reads it), so it survives the wire's <Fault>, which carries a code and a message.
 */
import { FerryError } from '../errors/registry.js';

/** Connection errors that prove the request never reached the replica. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

const MARK = 'leader at ';

/** The `leaderIs` part of a NotLeader message: names the leader so a client can go there. */
export function notLeaderText(self: string, leaderUrl: string | undefined): string {
  return leaderUrl === undefined || leaderUrl === self
    ? 'no leader is elected now (retry in a few seconds)'
    : `send changes to the ${MARK}${leaderUrl} (reads are served here)`;
}

/** The leader's URL a NotLeader message names, if any. */
export function namedLeaderOf(message: string): string | undefined {
  const i = message.indexOf(MARK);
  if (i < 0) return undefined;
  const m = /^https?:\/\/[^\s()]+/.exec(message.slice(i + MARK.length));
  return m?.[0];
}

/** What a failed attempt means for the route: go to another replica, or give the error to the caller. */
export type RouteFailure =
  | { readonly kind: 'notLeader'; readonly leader?: string }
  | { readonly kind: 'notDelivered' }
  | { readonly kind: 'final' };

/** A failed wire call (shared/wire/errors.ts) as the route sees it; `code` is the service's NotLeader code. */
export function wireRouteFailure(e: unknown, code = 'NotLeader'): RouteFailure {
  if (!(e instanceof FerryError)) return { kind: 'final' };
  if (e.code === 'RemoteFault' && e.fields.remoteCode === code) {
    const leader = namedLeaderOf(String(e.fields.remoteMessage ?? ''));
    return leader === undefined ? { kind: 'notLeader' } : { kind: 'notLeader', leader };
  }
  if (e.code === 'PeerUnreachable' && NEVER_SENT.has(String(e.fields.detail ?? ''))) return { kind: 'notDelivered' };
  return { kind: 'final' };
}

export class LeaderRoute {
  private last: string;

  constructor(private readonly urls: readonly string[], private readonly classify: (e: unknown) => RouteFailure = wireRouteFailure) {
    // A programming error, never a client's or operator's: every config that makes a route requires at least one URL.
    if (urls.length === 0) throw new Error('a leader route needs at least one URL');
    this.last = urls[0] as string;
  }

  /** Where the next request goes first: the replica that answered last. */
  current(): string {
    return this.last;
  }

  /** Sends with `attempt` to the leader as known, following NotLeader and refused connections; rejects with the last failure. */
  async send<T>(attempt: (url: string) => Promise<T>): Promise<T> {
    const tried = new Set<string>();
    let url = this.last;
    for (;;) {
      try {
        const r = await attempt(url);
        this.last = url;
        return r;
      } catch (e) {
        const f = this.classify(e);
        if (f.kind === 'final') throw e;
        tried.add(url);
        const named = f.kind === 'notLeader' && f.leader !== undefined && this.urls.includes(f.leader) && !tried.has(f.leader) ? f.leader : undefined;
        const next = named ?? this.urls.find((u) => !tried.has(u));
        if (next === undefined) throw e;
        url = next;
      }
    }
  }
}
