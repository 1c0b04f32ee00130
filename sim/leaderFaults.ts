/**
 * A leader's faults (issue 21), with CLC replicas (and, one instance per partition, with CC replicas:
 * `ccLeaderChange`, `ccStaleLeader`, where "a change" is one sent to an NC): `clcLeaderChange` cuts the leader off from
 * etcd for a while (its keep-alives go unanswered: it stops leading at its lease's deadline, etcd lets
 * the lease run out, and another replica takes over); `clcStaleLeader` pauses it past its lease, as a
 * frozen VM, right after it sent something that matters, and resumes it: the change stamped with its
 * old epoch leaves only then, and what it had under way goes on with a leadership it has lost.
 */
import type { Clock } from '../shared/clock.js';
import type { Incarnation } from './incarnation.js';
import type { SimElection } from './simElection.js';
import type { SimEtcd } from './simEtcd.js';

/** A replica as these faults see it (a SimClc, a CC replica). */
export interface LeaderReplica {
  readonly name: string;
  readonly life: Incarnation;
  /** Its election (what etcd knows it as: its identity); absent with one CLC. */
  readonly election: SimElection | undefined;
}

/** How long an armed clcStaleLeader waits for the leader's next change before it pauses the leader anyway. */
const STALE_ARM_MS = 5000;

export interface LeaderFaultsDeps {
  readonly clock: Clock;
  readonly etcd: SimEtcd;
  readonly trace: (line: string) => void;
  /** The replica that leads now (none with one CLC). */
  readonly leader: () => LeaderReplica | undefined;
  readonly replicas: () => readonly (LeaderReplica | undefined)[];
  /** How long an armed stale-leader fault waits for a change (default STALE_ARM_MS; a CC leader sends changes more rarely). */
  readonly armMs?: number;
}

export class LeaderFaults {
  /** An armed clcStaleLeader: the pause (ms) the leader takes right after its next change. */
  private stalePause: number | undefined;

  constructor(private readonly d: LeaderFaultsDeps) {}

  /** clcLeaderChange: the leader cannot reach etcd for `ms`. */
  cutLeaderFromEtcd(ms: number): void {
    const leader = this.d.leader();
    if (leader === undefined) return;
    const identity = leader.election?.self ?? leader.name;
    this.d.etcd.cutOff.add(identity);
    this.d.trace(`${leader.name} cut off from etcd for ${ms} ms`);
    this.d.clock.setTimer(ms, () => {
      if (this.d.etcd.cutOff.delete(identity)) this.d.trace(`${leader.name} reaches etcd again`);
    });
  }

  /**
   * clcStaleLeader: the leader is paused for `ms` right after it sends its next change to a CC or asks a
   * BMC for a power status (`sent`), or after STALE_ARM_MS (`armMs`) whatever it sent.
   */
  pauseLeader(ms: number): void {
    if (this.d.leader() === undefined && this.d.replicas().length < 2) return;
    this.stalePause = ms;
    this.d.clock.setTimer(this.d.armMs ?? STALE_ARM_MS, () => {
      const leader = this.d.leader();
      if (this.stalePause === ms && leader !== undefined) this.pause(leader, ms, 'no change sent meanwhile');
    });
  }

  /** A replica (in its life `life`) just sent something that matters: an armed clcStaleLeader pauses it if it leads. */
  sent(clc: LeaderReplica | undefined, life: Incarnation, why: string): void {
    const stale = this.stalePause;
    if (stale !== undefined && clc !== undefined && clc.life === life && !life.isPaused && this.d.leader() === clc) this.pause(clc, stale, why);
  }

  /** Heal: every paused replica runs again, every replica reaches etcd, nothing stays armed. */
  healAll(): void {
    this.stalePause = undefined;
    this.d.etcd.cutOff.clear();
    for (const c of this.d.replicas()) if (c !== undefined) this.resume(c);
  }

  /** A paused replica runs again before its pause is over (a newer leader has reached where its held change goes). */
  resumeNow(replica: LeaderReplica, why: string): void {
    if (!replica.life.isPaused) return;
    this.d.trace(`${replica.name} resumes early (${why})`);
    replica.life.resume();
  }

  /** Faults stop (the heal phase): nothing armed goes off. */
  disarm(): void {
    this.stalePause = undefined;
  }

  private pause(clc: LeaderReplica, ms: number, why: string): void {
    this.stalePause = undefined;
    clc.life.pause();
    this.d.trace(`${clc.name} paused for ${ms} ms (${why})`);
    this.d.clock.setTimer(ms, () => this.resume(clc));
  }

  private resume(clc: LeaderReplica): void {
    if (!clc.life.isPaused) return;
    this.d.trace(`${clc.name} resumes`);
    clc.life.resume();
  }
}
