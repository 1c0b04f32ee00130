/**
 * The repairs HA owes a host (issue 6), pure like the machine that calls it (hostHaMachine.ts): a
 * host that lost control while its VMs ran (DEGRADED) is owed a drain (DisableService, then
 * MigrateInstances, until it is empty), a FENCED host a restart of its instances elsewhere, and a
 * fenced host returned to service (unfenced) the power-on of its own instances left shut off there. The
 * debt is in the host's record, so it survives state changes (the NC coming back makes the host
 * AVAILABLE, yet it is still drained) and CLC restarts; one attempt runs at a time, each outcome
 * goes to the event log, and a failed attempt is retried with back-off. An owed drain gives up after
 * drainMaxAttempts (an operator decides); a restart elsewhere or a power-on never does (instances are down).
 */
import type { HaSettings } from './settings.js';
import type { HaEffect, HaOwedRepair, HostHaRecord } from './hostHaState.js';

export interface RepairStep {
  readonly next: HostHaRecord;
  readonly effects: readonly HaEffect[];
}

const none = (rec: HostHaRecord): RepairStep => ({ next: rec, effects: [] });

/** Wait after failed attempt number `attempts`: doubles from the initial delay, capped at the interval. */
export function repairBackoffMs(attempts: number, s: HaSettings): number {
  return Math.min(s.repairRetryInitialDelayMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30), s.repairRetryIntervalMs);
}

const WHAT: Readonly<Record<HaOwedRepair['kind'], string>> = {
  drain: 'drain', evacuate: 'restart elsewhere of the instances', powerOn: 'power-on of its own instances',
};

const exhausted = (o: HaOwedRepair, s: HaSettings): boolean => o.kind === 'drain' && o.attempts >= s.drainMaxAttempts;

/** Records that `kind` is owed from now on (an owed repair of the same kind keeps its count). */
export function owe(rec: HostHaRecord, kind: HaOwedRepair['kind'], now: number): HostHaRecord {
  if (rec.owed?.kind === kind) return rec;
  // An attempt of the repair this one replaces (a power-on when a drain becomes owed) may still run:
  // the new debt keeps its token in flight, so its own first attempt waits for that one to settle
  // (one repair attempt at a time). With no attempt of its own yet, that result only frees the way.
  return { ...rec, owed: { kind, since: now, attempts: 0, nextAttemptAt: now, inFlight: rec.owed?.inFlight ?? null, lastOutcome: null } };
}

/** Forgets what is owed, saying why in the log (an operator's EnableService, HA switched off, a fence taking over). */
export function forgive(rec: HostHaRecord, why: string): RepairStep {
  const o = rec.owed;
  if (!o) return none(rec);
  return {
    next: { ...rec, owed: null },
    effects: [{ kind: 'alert', host: rec.host, level: 'info', message: `host ${rec.host}: owed ${WHAT[o.kind]} dropped after ${o.attempts} attempt(s): ${why}` }],
  };
}

/**
 * Why a due attempt is held rather than started: automation suspended (any repair), or a storm (a
 * drain only: it takes a host out of service, while a restart elsewhere or a power-on brings
 * instances back). `storm` is the partition's stable hold text (hostHaMoves.stormHold), present
 * only while the storm guard refuses remediation.
 */
export interface RepairHold {
  readonly suspended?: string;
  readonly storm?: string;
}

/** The hold that applies to a due attempt of `kind`, or undefined when it may start. */
export function holdFor(kind: HaOwedRepair['kind'], hold: RepairHold | undefined): { readonly reason: string; readonly storm: boolean } | undefined {
  if (hold?.suspended !== undefined) return { reason: hold.suspended, storm: false };
  if (kind === 'drain' && hold?.storm !== undefined) return { reason: hold.storm, storm: true };
  return undefined;
}

/**
 * Starts the next attempt when one is due and none runs; an evacuation only while the host is FENCED.
 * While it is held (holdFor: automation suspended, or a drain during a storm), a due attempt is kept
 * with the reason in `heldBy` (said once; `stormHeld` when the storm holds it), and started by the
 * first tick after the hold ends.
 */
export function startDueRepair(rec: HostHaRecord, now: number, s: HaSettings, hold?: RepairHold): RepairStep {
  const o = rec.owed;
  if (!o || o.inFlight !== null || now < o.nextAttemptAt || exhausted(o, s)) return none(rec);
  if (o.kind === 'evacuate' && rec.state !== 'FENCED') return none(rec);
  // Nothing starts behind a fence (entering FENCING forgives it; FENCED owes a restart elsewhere instead).
  if (o.kind === 'powerOn' && (rec.state === 'FENCING' || rec.state === 'FENCED')) return none(rec);
  const held = holdFor(o.kind, hold);
  if (held !== undefined) {
    if (o.heldBy === held.reason) return none(rec);
    const { stormHeld: _was, ...kept } = o;
    return {
      next: { ...rec, owed: { ...kept, heldBy: held.reason, ...(held.storm ? { stormHeld: true as const } : {}) } },
      effects: [{ kind: 'alert', host: rec.host, level: 'warn', message: `host ${rec.host}: owed ${WHAT[o.kind]} held, not dropped: ${held.reason}` }],
    };
  }
  const token = rec.seq + 1;
  const attempt = o.attempts + 1;
  const { heldBy: _held, stormHeld: _storm, ...rest } = o;
  const next: HostHaRecord = { ...rec, seq: token, owed: { ...rest, attempts: attempt, inFlight: token } };
  const effect: HaEffect = o.kind === 'evacuate'
    ? { kind: 'evacuate', host: rec.host, fencedBy: rec.fencedBy ?? 'agent', token, attempt }
    : { kind: o.kind, host: rec.host, token, attempt };
  return { next, effects: [effect] };
}

/** An attempt finished: done clears the debt; otherwise the next attempt waits its back-off (or, past the bound, an operator). */
export function onRepairResult(rec: HostHaRecord, token: number, done: boolean, detail: string, now: number, s: HaSettings): RepairStep {
  const o = rec.owed;
  if (o?.inFlight !== token) return none(rec);
  // The replaced repair's attempt settled (owe above): the owed one may start its first attempt now.
  if (o.attempts === 0) return none({ ...rec, owed: { ...o, inFlight: null } });
  const host = rec.host;
  const label = `${WHAT[o.kind]} of ${host}, attempt ${o.attempts}`;
  if (done) {
    return { next: { ...rec, owed: null }, effects: [{ kind: 'alert', host, level: 'info', message: `${label}: done (${detail})` }] };
  }
  const failed: HaOwedRepair = { ...o, inFlight: null, lastOutcome: detail, nextAttemptAt: now + repairBackoffMs(o.attempts, s) };
  const giveUp = exhausted(failed, s);
  const message = giveUp
    ? `${label}: not done (${detail}); giving up after ${o.attempts} attempts: an operator must drain it (MigrateInstances) or EnableService it`
    : `${label}: not done (${detail}); retried at ${failed.nextAttemptAt}`;
  return { next: { ...rec, owed: failed }, effects: [{ kind: 'alert', host, level: giveUp ? 'critical' : 'warn', message }] };
}

/** After a CLC restart the attempt in flight is lost: the next one may start at once (repairs are idempotent). */
export function resumeRepair(rec: HostHaRecord, now: number): HostHaRecord {
  const o = rec.owed;
  if (o?.inFlight == null) return rec;
  return { ...rec, owed: { ...o, inFlight: null, nextAttemptAt: Math.min(o.nextAttemptAt, now) } };
}
