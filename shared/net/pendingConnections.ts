/**
 * Which connections a server closes to stay within its budget of *pending* connections (pure: no
 * sockets, no clock). A connection is pending while no complete request of it is being served: in
 * its TLS handshake, sending headers or a body, or idle between requests. Pending connections cost
 * a file handle each and nothing else, so they are what a flood of idle or half-sent connections is
 * made of; a connection being served is never closed here.
 *
 * Past a cap the newcomer is never refused: the oldest pending connection of the peer holding the
 * most is closed instead. So a new connection (the administrator's) always gets in and has until
 * `maxPending` later connections arrive to send its request, and a flood from one peer closes that
 * peer's own connections first. Connections that were answered with a success (regulars: the
 * administrator's keep-alive connections on the CLC, the CLC's on a CC) are closed only when no
 * stranger is pending, so an unauthenticated flood never cuts them.
 */

/** stranger: never answered with a success on this connection; regular: answered with a 2xx or 3xx at least once. */
export type Standing = 'stranger' | 'regular';

export interface PendingLimits {
  /** Pending connections in all (at least 1). */
  readonly maxPending: number;
  /** Pending connections of one peer: its address, or its certificate once the TLS handshake named it (at least 1). */
  readonly maxPendingPerPeer: number;
}

/** A connection to close (effect as data: the adapter destroys the socket). */
export interface Eviction<C> {
  readonly conn: C;
  readonly peer: string;
  readonly standing: Standing;
  /** peer: its peer was at maxPendingPerPeer; total: all were at maxPending. */
  readonly reason: 'peer' | 'total';
}

interface Entry {
  peer: string;
  standing: Standing;
  /** Complete requests received and not yet answered; pending while 0. */
  serving: number;
}

/**
 * The pending connections of one standing, by peer, each peer's oldest first, with the peer holding
 * the most found in O(1): peersAt[n] holds the peers with n pending here, in the order they got there.
 */
class PeerPool<C> {
  private readonly byPeer = new Map<string, Set<C>>();
  private readonly peersAt: Set<string>[] = [];
  private top = 0;
  size = 0;

  add(conn: C, peer: string): void {
    let conns = this.byPeer.get(peer);
    if (!conns) {
      conns = new Set();
      this.byPeer.set(peer, conns);
    }
    this.move(peer, conns.size, conns.size + 1);
    conns.add(conn);
    this.size++;
  }

  delete(conn: C, peer: string): void {
    const conns = this.byPeer.get(peer);
    if (!conns?.delete(conn)) return;
    this.size--;
    this.move(peer, conns.size + 1, conns.size);
    if (conns.size === 0) this.byPeer.delete(peer);
  }

  countOf(peer: string): number {
    return this.byPeer.get(peer)?.size ?? 0;
  }

  oldestOf(peer: string): C | undefined {
    return first(this.byPeer.get(peer));
  }

  /** The oldest pending connection of the peer holding the most. */
  oldestOfHeaviest(): C | undefined {
    const peer = first(this.peersAt[this.top]);
    return peer === undefined ? undefined : this.oldestOf(peer);
  }

  private move(peer: string, from: number, to: number): void {
    if (from > 0) this.peersAt[from]?.delete(peer);
    if (to > 0) {
      let set = this.peersAt[to];
      if (!set) {
        set = new Set();
        this.peersAt[to] = set;
      }
      set.add(peer);
    }
    if (to > this.top) this.top = to;
    while (this.top > 0 && (this.peersAt[this.top]?.size ?? 0) === 0) this.top--;
  }
}

function first<T>(s: Set<T> | undefined): T | undefined {
  if (!s) return undefined;
  for (const x of s) return x;
  return undefined;
}

export class PendingConnections<C> {
  private readonly entries = new Map<C, Entry>();
  private readonly pools: Readonly<Record<Standing, PeerPool<C>>> = { stranger: new PeerPool<C>(), regular: new PeerPool<C>() };

  constructor(readonly limits: PendingLimits) {
    if (!(limits.maxPending >= 1 && limits.maxPendingPerPeer >= 1)) throw new RangeError(`pending-connection caps must be at least 1 (got ${limits.maxPending}, ${limits.maxPendingPerPeer})`);
  }

  /** Connections known (pending or being served). */
  get open(): number {
    return this.entries.size;
  }

  get pending(): number {
    return this.pools.stranger.size + this.pools.regular.size;
  }

  pendingOf(peer: string): number {
    return this.pools.stranger.countOf(peer) + this.pools.regular.countOf(peer);
  }

  /** A new connection from `peer`: it is pending; returns the connections to close to make room for it. */
  opened(conn: C, peer: string): Eviction<C>[] {
    if (this.entries.has(conn)) return [];
    const out = this.makeRoom(peer, true);
    this.entries.set(conn, { peer, standing: 'stranger', serving: 0 });
    this.pools.stranger.add(conn, peer);
    return out;
  }

  /** The TLS handshake named the peer (its certificate): it now counts under that name. */
  identified(conn: C, peer: string): Eviction<C>[] {
    const e = this.entries.get(conn);
    if (!e || e.peer === peer) return [];
    if (e.serving > 0) {
      e.peer = peer;
      return [];
    }
    this.pools[e.standing].delete(conn, e.peer);
    const out = this.makeRoom(peer, false);
    e.peer = peer;
    this.pools[e.standing].add(conn, peer);
    return out;
  }

  /** A complete request (headers and body) arrived: the connection is being served, never closed here. */
  received(conn: C): void {
    const e = this.entries.get(conn);
    if (!e) return;
    if (e.serving === 0) this.pools[e.standing].delete(conn, e.peer);
    e.serving++;
  }

  /**
   * A received request was answered (`ok`: with a 2xx or 3xx, which makes the connection a
   * regular). With nothing else being served it is pending again, as if it had just arrived.
   */
  answered(conn: C, ok: boolean): Eviction<C>[] {
    const e = this.entries.get(conn);
    if (!e || e.serving === 0) return [];
    e.serving--;
    if (ok) e.standing = 'regular';
    if (e.serving > 0) return [];
    const out = this.makeRoom(e.peer, true);
    this.pools[e.standing].add(conn, e.peer);
    return out;
  }

  /** The socket closed (by anyone); forgetting an unknown or evicted connection is a no-op. */
  closed(conn: C): void {
    const e = this.entries.get(conn);
    if (!e) return;
    this.entries.delete(conn);
    if (e.serving === 0) this.pools[e.standing].delete(conn, e.peer);
  }

  /** Room for one more pending connection of `peer` (and, if `adding`, one more in all). */
  private makeRoom(peer: string, adding: boolean): Eviction<C>[] {
    const out: Eviction<C>[] = [];
    while (this.pendingOf(peer) + 1 > this.limits.maxPendingPerPeer) {
      const victim = this.pools.stranger.oldestOf(peer) ?? this.pools.regular.oldestOf(peer);
      if (victim === undefined) break;
      out.push(this.evict(victim, 'peer'));
    }
    while (this.pending + (adding ? 1 : 0) > this.limits.maxPending) {
      const victim = this.pools.stranger.oldestOfHeaviest() ?? this.pools.regular.oldestOfHeaviest();
      if (victim === undefined) break;
      out.push(this.evict(victim, 'total'));
    }
    return out;
  }

  private evict(conn: C, reason: Eviction<C>['reason']): Eviction<C> {
    const e = this.entries.get(conn) as Entry;
    this.closed(conn);
    return { conn, peer: e.peer, standing: e.standing, reason };
  }
}
