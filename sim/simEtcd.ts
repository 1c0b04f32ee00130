/**
 * The part of etcd the CLC replicas' election and guarded writes rely on (issue 21), on the shared
 * ManualClock, which is etcd's own clock here: leases that expire at (arrival of the last grant or
 * keep-alive) + TTL; candidate keys on leases, each with the revision it was created at (revisions
 * only grow, so a later leadership always has a larger epoch); the leader is the oldest candidate
 * whose lease lives. A guarded write commits only while the writer's key still exists with the
 * epoch it was elected with (shared/store/etcdStore.ts's txn compare). Nothing here is durable
 * per process: etcd outlives every replica, as a three-member cluster would. Several elections share
 * it, each under its own prefix (`clc/election/`, `cc/<partition>/election/`), as in the product; the
 * revision is etcd's one counter.
 */
import type { Clock } from '../shared/clock.js';

/** The CLC replicas' election (the default of every call that names none). */
export const CLC_ELECTION = 'clc/election/';

export interface SimCandidate {
  readonly key: string;
  /** The replica's name (its advertised URL in the product). */
  readonly identity: string;
  /** The key's create revision: the epoch of the leadership it may become. */
  readonly epoch: number;
  readonly lease: number;
}

export class SimEtcd {
  private revision = 0;
  private leaseSeq = 0;
  /** Lease id → when etcd expires it. */
  private readonly leases = new Map<number, number>();
  private readonly keys = new Map<string, SimCandidate>();
  /** Replicas that cannot reach etcd now (their calls time out): the clcLeaderChange fault. */
  readonly cutOff = new Set<string>();
  /** Every leadership etcd has granted (the oldest live candidate of an election, each time it was seen to change), for the coverage report. */
  readonly terms: { readonly election: string; readonly identity: string; readonly epoch: number; readonly at: number }[] = [];
  /** Per election: the epoch of the last term noted. */
  private readonly lastTerm = new Map<string, number>();
  /** Elections seen (observe() looks at each). */
  private readonly elections = new Set<string>([CLC_ELECTION]);

  constructor(private readonly clock: Clock) {}

  grant(ttlMs: number): number {
    const id = ++this.leaseSeq;
    this.leases.set(id, this.clock.now() + ttlMs);
    return id;
  }

  /** Extends a live lease from now; false when it has expired or was revoked (etcd's "lease not found"). */
  keepAlive(lease: number, ttlMs: number): boolean {
    if (!this.live(lease)) return false;
    this.leases.set(lease, this.clock.now() + ttlMs);
    return true;
  }

  revoke(lease: number): void {
    this.leases.delete(lease);
    this.observe();
  }

  /** Creates the candidate key on `lease` at the next revision, under `election`; undefined when the lease is gone. */
  put(identity: string, lease: number, election = CLC_ELECTION): SimCandidate | undefined {
    if (!this.live(lease)) return undefined;
    const epoch = ++this.revision;
    this.elections.add(election);
    const c = { key: `${election}${lease}`, identity, epoch, lease };
    this.keys.set(c.key, c);
    this.observe();
    return c;
  }

  /** Whether the key still exists with this create revision (its lease lives). */
  holds(key: string, epoch: number): boolean {
    const c = this.keys.get(key);
    return c !== undefined && c.epoch === epoch && this.live(c.lease);
  }

  /** Whether a candidate of `election` older than `epoch` still lives (the campaign waits for it to go). */
  olderThan(epoch: number, election = CLC_ELECTION): boolean {
    return this.candidates(election).some((c) => c.epoch < epoch);
  }

  /** The leader of `election` as etcd holds it now: its oldest live candidate (noted in `terms` when it changed). */
  leader(election = CLC_ELECTION): SimCandidate | undefined {
    const l = this.candidates(election)[0];
    if (l !== undefined && this.lastTerm.get(election) !== l.epoch) {
      this.lastTerm.set(election, l.epoch);
      this.terms.push({ election, identity: l.identity, epoch: l.epoch, at: this.clock.now() });
    }
    return l;
  }

  /** Live candidates of `election`, oldest first; keys whose lease ran out are gone (etcd deletes them with it). */
  candidates(election = CLC_ELECTION): SimCandidate[] {
    for (const [k, c] of this.keys) if (!this.live(c.lease)) this.keys.delete(k);
    return [...this.keys.values()].filter((c) => c.key.startsWith(election)).sort((a, b) => a.epoch - b.epoch);
  }

  /** Notes a change of leader in `terms` (after every call the runners make; lease expiry is seen when someone looks). */
  observe(): void {
    for (const e of this.elections) this.leader(e);
  }

  private live(lease: number): boolean {
    const until = this.leases.get(lease);
    if (until === undefined) return false;
    if (until > this.clock.now()) return true;
    this.leases.delete(lease);
    return false;
  }
}
