/**
 * Leadership of one process in one etcd election (issue 21), as a pure machine (STYLE habit 1):
 * `step(snapshot, event, now, settings) -> { next, effects }`; shared/leader/etcdElection.ts runs the
 * effects against etcd and feeds results back as events.
 *
 * Safety rests on the lease, measured on our side: the lease is known to live until
 * `validUntil` = (when the newest acknowledged grant or keep-alive was *sent*) + TTL, because etcd
 * restarts the TTL when it receives it, which is after we sent it. A leader stops leading at
 * `validUntil - margin` (the margin covers clock-rate drift and a late timer), by the timer or by any
 * read of `leading()` after it, whichever comes first: it never acts on a lease that may be gone.
 * The epoch is the create revision of the leader's key: etcd's revision only grows, so every new
 * leadership has a larger epoch than every one before it (the fencing token).
 */

/** Where this process stands in the election. */
export type LeaderState =
  /** Not taking part yet (before start). */
  | 'idle'
  /** Getting a lease and a candidate key, or waiting for the older candidates' keys to go. */
  | 'campaigning'
  /** Elected; leads while now < validUntil - margin. */
  | 'leader'
  /** The campaign failed or the lease ran out: a new campaign (a new lease and key) after a pause. */
  | 'backoff'
  /** Resigned; nothing more happens. */
  | 'stopped';

export type LeaderEvent =
  | { readonly type: 'start' }
  /** The lease was granted; the grant request was sent at `sentAt`. */
  | { readonly type: 'granted'; readonly sentAt: number }
  /** No older candidate is left: this process's key (created at revision `epoch`) leads. */
  | { readonly type: 'elected'; readonly key: string; readonly epoch: string }
  /** A keep-alive sent at `sentAt` was acknowledged. */
  | { readonly type: 'keepalive'; readonly sentAt: number }
  /** A timer armed by `armTimer` fired (or any moment the runner wants the lease checked). */
  | { readonly type: 'tick' }
  /** etcd refused or lost the campaign: the lease was revoked or expired, the key vanished, a call failed. */
  | { readonly type: 'failed'; readonly reason: string }
  /** The pause after a failure is over. */
  | { readonly type: 'retry' }
  | { readonly type: 'resign' };

export type LeaderEffect =
  /** Get a new lease, create the candidate key on it, wait for the older candidates. */
  | { readonly kind: 'campaign' }
  /** Stop keeping the current lease alive and revoke it (best effort: it expires by itself anyway). */
  | { readonly kind: 'dropCampaign' }
  | { readonly kind: 'becameLeader'; readonly epoch: string }
  | { readonly kind: 'lostLeadership'; readonly epoch: string; readonly reason: string }
  /** Send a `tick` at `at` (replaces any earlier timer). */
  | { readonly kind: 'armTimer'; readonly at: number }
  /** Send a `retry` at `at`. */
  | { readonly kind: 'scheduleRetry'; readonly at: number };

export interface LeaderSnapshot {
  readonly state: LeaderState;
  /** While leader: the leader key and its create revision. */
  readonly key?: string;
  readonly epoch?: string;
  /** Until when the current lease is known to live (ms; -Infinity before a grant). */
  readonly validUntil: number;
  /** Failed campaigns since the last election, for the back-off. */
  readonly failures: number;
}

export interface LeaderSettings {
  readonly ttlMs: number;
  /** Stop leading this long before the lease could run out. */
  readonly marginMs: number;
  /** The first pause after a failure; doubles per failure, capped at the TTL. */
  readonly backoffMs: number;
}

export interface LeaderStep {
  readonly next: LeaderSnapshot;
  readonly effects: readonly LeaderEffect[];
}

export const INITIAL_LEADER: LeaderSnapshot = Object.freeze({ state: 'idle', validUntil: Number.NEGATIVE_INFINITY, failures: 0 });

/** An event the state cannot take: a bug in the runner, never a client's or an operator's doing. */
export class IllegalLeaderEventError extends Error {
  constructor(readonly state: LeaderState, readonly event: LeaderEvent['type']) {
    super(`leader election: event ${event} is not allowed in state ${state}`);
    this.name = 'IllegalLeaderEventError';
  }
}

/** Whether a snapshot leads at `now`: the state says so and the lease is still known to live. */
export function leadsAt(s: LeaderSnapshot, now: number, settings: LeaderSettings): boolean {
  return s.state === 'leader' && now < s.validUntil - settings.marginMs;
}

function retryDelay(failures: number, settings: LeaderSettings): number {
  return Math.min(settings.ttlMs, settings.backoffMs * 2 ** Math.min(failures, 20));
}

type Move = (s: LeaderSnapshot, e: LeaderEvent, now: number, settings: LeaderSettings) => LeaderStep;

const stay: Move = (s) => ({ next: s, effects: [] });

/** Campaign over (failed, lease gone): drop it, pause, try again; say so if it led. */
function fail(s: LeaderSnapshot, reason: string, now: number, settings: LeaderSettings): LeaderStep {
  const effects: LeaderEffect[] = [];
  if (s.state === 'leader' && s.epoch !== undefined) effects.push({ kind: 'lostLeadership', epoch: s.epoch, reason });
  effects.push({ kind: 'dropCampaign' }, { kind: 'scheduleRetry', at: now + retryDelay(s.failures, settings) });
  return { next: { state: 'backoff', validUntil: Number.NEGATIVE_INFINITY, failures: s.failures + 1 }, effects };
}

const campaign: Move = (s) => ({ next: { state: 'campaigning', validUntil: Number.NEGATIVE_INFINITY, failures: s.failures }, effects: [{ kind: 'campaign' }] });

const granted: Move = (s, e, _now, settings) => ({ next: { ...s, validUntil: Math.max(s.validUntil, (e as { sentAt: number }).sentAt + settings.ttlMs) }, effects: [] });

const elected: Move = (s, e, now, settings) => {
  const { key, epoch } = e as { key: string; epoch: string };
  // Elected after the lease may have run out (a long wait, a stalled process): not a leadership to act on.
  if (now >= s.validUntil - settings.marginMs) return fail(s, 'lease may have expired before the election finished', now, settings);
  return {
    next: { state: 'leader', key, epoch, validUntil: s.validUntil, failures: 0 },
    effects: [{ kind: 'becameLeader', epoch }, { kind: 'armTimer', at: s.validUntil - settings.marginMs }],
  };
};

const leaderKeepalive: Move = (s, e, now, settings) => {
  const validUntil = Math.max(s.validUntil, (e as { sentAt: number }).sentAt + settings.ttlMs);
  // A late acknowledgement cannot revive a leadership whose deadline has passed.
  if (now >= s.validUntil - settings.marginMs) return fail(s, 'lease expired (no keep-alive acknowledged in time)', now, settings);
  return { next: { ...s, validUntil }, effects: [{ kind: 'armTimer', at: validUntil - settings.marginMs }] };
};

const leaderTick: Move = (s, _e, now, settings) => {
  if (now >= s.validUntil - settings.marginMs) return fail(s, 'lease expired (no keep-alive acknowledged in time)', now, settings);
  return { next: s, effects: [{ kind: 'armTimer', at: s.validUntil - settings.marginMs }] };
};

const failed: Move = (s, e, now, settings) => fail(s, (e as { reason: string }).reason, now, settings);

const resign: Move = (s) => {
  const effects: LeaderEffect[] = [];
  if (s.state === 'leader' && s.epoch !== undefined) effects.push({ kind: 'lostLeadership', epoch: s.epoch, reason: 'resigned' });
  if (s.state !== 'idle' && s.state !== 'stopped') effects.push({ kind: 'dropCampaign' });
  return { next: { state: 'stopped', validUntil: Number.NEGATIVE_INFINITY, failures: s.failures }, effects };
};

/**
 * The transition table, read by state. A missing entry is illegal. Events that may arrive late from a
 * campaign already dropped (a keep-alive, a timer, a failure) are ignored where they cannot matter.
 */
const TABLE: Readonly<Record<LeaderState, Partial<Record<LeaderEvent['type'], Move>>>> = {
  idle: { start: campaign, resign },
  campaigning: { granted, keepalive: granted, elected, tick: stay, failed, resign },
  leader: { keepalive: leaderKeepalive, tick: leaderTick, failed, resign },
  backoff: { retry: campaign, keepalive: stay, tick: stay, failed: stay, resign },
  stopped: { keepalive: stay, tick: stay, failed: stay, retry: stay, resign: stay, granted: stay, elected: stay },
};

export function step(s: LeaderSnapshot, e: LeaderEvent, now: number, settings: LeaderSettings): LeaderStep {
  const move = TABLE[s.state][e.type];
  if (move === undefined) throw new IllegalLeaderEventError(s.state, e.type);
  return move(s, e, now, settings);
}

/** For docs and tests: which events each state takes. */
export function acceptedEvents(state: LeaderState): ReadonlyArray<LeaderEvent['type']> {
  return Object.keys(TABLE[state]) as LeaderEvent['type'][];
}
