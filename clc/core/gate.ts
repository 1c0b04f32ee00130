/**
 * The change gate (issue 3), per partition: while a DisableService or MigrateInstances of a partition
 * is pending (from its receipt to its reply), later requests that change that partition wait, and are
 * let through in arrival order once it has replied, so none runs against the capacity it is about
 * to change. Reads never enter the gate. Pure (STYLE habit 1): `step(state, event, now, limits)`
 * returns the next state and the effects (grant, refuse, deadline) for a runner to carry out.
 *
 * A ticket claims one or more partitions. It may enter claiming every partition it might touch and
 * narrow the claim once it knows (a routing read): later changes queue behind it meanwhile, so its
 * place in the order is its arrival. Admission rules, per claimed partition:
 *   change     waits for an exclusive that is granted, or waiting and arrived earlier;
 *   exclusive  waits for any ticket that is granted, or waiting and arrived earlier.
 * A ticket is granted all at once, when no partition of its claim holds it back. A ticket only ever
 * waits for earlier tickets or granted ones, and a granted one waits for nothing, so the gate cannot
 * deadlock. Waiting is bounded: at most `maxWaiting` tickets wait per partition (more are refused at
 * once) and none waits longer than `maxWaitMs` (then it is refused); a refused request did nothing.
 */

/** What a request does to its partitions. */
export type GateKind =
  /** DisableService, MigrateInstances: runs alone in its partitions; changes that arrive meanwhile wait. */
  | 'exclusive'
  /** RunInstances, TerminateInstances, EnableService, CancelMigration: run alongside each other. */
  | 'change';

export interface GateLimits {
  /** Waiting tickets per partition; one more is refused at once. */
  readonly maxWaiting: number;
  /** How long a ticket may wait before it is refused. */
  readonly maxWaitMs: number;
}

/** A burst of launches behind a drain waits rather than being refused (a script of 1,000 RunInstances: bench/apiQueued.ts); 30 s covers a drain's reply. */
export const DEFAULT_GATE_LIMITS: GateLimits = Object.freeze({ maxWaiting: 4096, maxWaitMs: 30_000 });

export interface GateTicket {
  readonly id: number;
  readonly kind: GateKind;
  /** What the request is, for the messages of the requests it holds back ("DisableService of 127.0.1.1"). */
  readonly label: string;
  readonly partitions: readonly string[];
  readonly enteredAt: number;
  readonly granted: boolean;
}

export interface GateState {
  /** In arrival order. */
  readonly tickets: readonly GateTicket[];
}

export const EMPTY_GATE: GateState = Object.freeze({ tickets: Object.freeze([]) as readonly GateTicket[] });

export type GateEvent =
  | { readonly type: 'enter'; readonly id: number; readonly kind: GateKind; readonly label: string; readonly partitions: readonly string[] }
  /** Keeps only these of the ticket's partitions (each must already be claimed). */
  | { readonly type: 'narrow'; readonly id: number; readonly partitions: readonly string[] }
  /** The request replied (or failed): its ticket goes, granted or not. Unknown ids are ignored. */
  | { readonly type: 'leave'; readonly id: number }
  /** Time passed: tickets waiting since `now - maxWaitMs` or earlier are refused. */
  | { readonly type: 'tick' };

export type RefusalReason = 'queue-full' | 'timeout';

export type GateEffect =
  | { readonly type: 'grant'; readonly id: number }
  | {
    readonly type: 'refuse'; readonly id: number; readonly reason: RefusalReason;
    /** The partition that held it back and what held it back there. */
    readonly partition: string; readonly blockedBy: string;
  }
  /** The ticket waits: refuse it at `at` unless it is granted or leaves first. */
  | { readonly type: 'deadline'; readonly id: number; readonly at: number };

export interface GateStep {
  readonly next: GateState;
  readonly effects: readonly GateEffect[];
}

/** An event the gate's state does not allow (a bug in the caller, never the admin's doing). */
export class GateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GateError';
  }
}

/** The first ticket that holds `t` back in partition `p`, if any. */
function blockerIn(tickets: readonly GateTicket[], t: GateTicket, p: string): GateTicket | undefined {
  let earlier = true;
  for (const o of tickets) {
    if (o.id === t.id) {
      earlier = false;
      continue;
    }
    if (!o.partitions.includes(p) || !(o.granted || earlier)) continue;
    if (t.kind === 'exclusive' || o.kind === 'exclusive') return o;
  }
  return undefined;
}

function blocker(tickets: readonly GateTicket[], t: GateTicket): { partition: string; by: GateTicket } | undefined {
  for (const p of t.partitions) {
    const by = blockerIn(tickets, t, p);
    if (by) return { partition: p, by };
  }
  return undefined;
}

function describeBlocker(by: GateTicket): string {
  return by.granted ? `${by.label} is pending` : `${by.label} waits ahead`;
}

interface Holders {
  any: number;
  exclusive: number;
}

function holdersOf(m: Map<string, Holders>, p: string): Holders {
  let h = m.get(p);
  if (!h) m.set(p, h = { any: 0, exclusive: 0 });
  return h;
}

function count(m: Map<string, Holders>, t: GateTicket, by: 1 | -1): void {
  for (const p of t.partitions) {
    const h = holdersOf(m, p);
    h.any += by;
    if (t.kind === 'exclusive') h.exclusive += by;
  }
}

/**
 * Grants, in arrival order, every waiting ticket nothing holds back (a grant only ever adds holders).
 * One pass with counts per partition (what `blocker` asks of each ticket: the earlier tickets, and the
 * later ones already granted), so a queue of thousands behind a DisableService is let through in
 * time linear in its length, not quadratic.
 */
function admit(tickets: readonly GateTicket[]): { tickets: GateTicket[]; grants: GateEffect[] } {
  const out = [...tickets];
  const grants: GateEffect[] = [];
  const earlier = new Map<string, Holders>();
  const laterGranted = new Map<string, Holders>();
  for (const t of out) if (t.granted) count(laterGranted, t, 1);
  out.forEach((t, i) => {
    if (t.granted) count(laterGranted, t, -1);
    const held = t.partitions.some((p) => {
      const e = holdersOf(earlier, p);
      const l = holdersOf(laterGranted, p);
      return t.kind === 'exclusive' ? e.any + l.any > 0 : e.exclusive + l.exclusive > 0;
    });
    if (!t.granted && !held) {
      out[i] = { ...t, granted: true };
      grants.push({ type: 'grant', id: t.id });
    }
    count(earlier, t, 1);
  });
  return { tickets: out, grants };
}

function waitingIn(tickets: readonly GateTicket[], p: string): number {
  return tickets.filter((t) => !t.granted && t.partitions.includes(p)).length;
}

export function step(state: GateState, event: GateEvent, now: number, limits: GateLimits): GateStep {
  switch (event.type) {
    case 'enter': {
      if (state.tickets.some((t) => t.id === event.id)) throw new GateError(`ticket ${event.id} entered twice`);
      const ticket: GateTicket = {
        id: event.id, kind: event.kind, label: event.label, partitions: [...new Set(event.partitions)], enteredAt: now, granted: false,
      };
      const held = blocker(state.tickets, ticket);
      if (!held) return { next: { tickets: [...state.tickets, { ...ticket, granted: true }] }, effects: [{ type: 'grant', id: ticket.id }] };
      const full = ticket.partitions.find((p) => waitingIn(state.tickets, p) >= limits.maxWaiting);
      if (full !== undefined) {
        return {
          next: state,
          effects: [{ type: 'refuse', id: ticket.id, reason: 'queue-full', partition: full, blockedBy: describeBlocker(blockerIn(state.tickets, ticket, full) ?? held.by) }],
        };
      }
      return { next: { tickets: [...state.tickets, ticket] }, effects: [{ type: 'deadline', id: ticket.id, at: now + limits.maxWaitMs }] };
    }
    case 'narrow': {
      const t = state.tickets.find((x) => x.id === event.id);
      if (!t) throw new GateError(`ticket ${event.id} narrowed after it left`);
      const extra = event.partitions.filter((p) => !t.partitions.includes(p));
      if (extra.length > 0) throw new GateError(`ticket ${event.id} (${t.label}) cannot widen its claim to ${extra.join(', ')}`);
      const keep = t.partitions.filter((p) => event.partitions.includes(p));
      const { tickets, grants } = admit(state.tickets.map((x) => (x.id === t.id ? { ...x, partitions: keep } : x)));
      return { next: { tickets }, effects: grants };
    }
    case 'leave': {
      if (!state.tickets.some((t) => t.id === event.id)) return { next: state, effects: [] };
      const { tickets, grants } = admit(state.tickets.filter((t) => t.id !== event.id));
      return { next: { tickets }, effects: grants };
    }
    case 'tick': {
      const refusals: GateEffect[] = [];
      for (const t of state.tickets) {
        if (t.granted || t.enteredAt + limits.maxWaitMs > now) continue;
        const held = blocker(state.tickets, t);
        refusals.push({
          type: 'refuse', id: t.id, reason: 'timeout',
          partition: held?.partition ?? t.partitions[0] ?? '', blockedBy: held ? describeBlocker(held.by) : 'nothing',
        });
      }
      if (refusals.length === 0) return { next: state, effects: [] };
      const gone = new Set(refusals.map((r) => r.id));
      const { tickets, grants } = admit(state.tickets.filter((t) => !gone.has(t.id)));
      return { next: { tickets }, effects: [...refusals, ...grants] };
    }
  }
}

/** Tickets waiting in each partition (for logs and tests). */
export function waitingByPartition(state: GateState): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of state.tickets) if (!t.granted) for (const p of t.partitions) out.set(p, (out.get(p) ?? 0) + 1);
  return out;
}
