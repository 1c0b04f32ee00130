/**
 * The migration coordinator: one pure reconcile step, in the manner of Cluster API's
 * MachineHealthCheck. Read the partition (plans from the source NCs, Incoming records from the
 * destinations), take `now` once, decide, and return effects as data plus when to look again.
 * Level-based: every decision is made from observed state, so a lost event, a duplicate or late
 * answer, or a CC restart changes nothing but timing.
 *
 * The rules, in the order they are applied (each is a row of the tests in test/cc/migration):
 *  1. Phase: the source's item state, or the destination's record before commit (phases.ts).
 *  2. Timeouts: preparing > prepareMs, ready > readyMs, migrating > backstop → give up on the item.
 *     A give-up from before commit presumed no commit took effect: once the source reports the item
 *     migrating (one did, while the CC could not see it: the source NC died right after it), it is
 *     dropped and the migrating phase's own limits apply (the NC's allowance, the CC's backstop).
 *  3. Give up → rollback on the source (it aborts a migrating item; the VM stays there). With the
 *     source unreachable only a destination still preparing is rolled back directly: a ready one
 *     may already be receiving (a commit the CC saw time out may have arrived), so it waits.
 *  4. cancelRequested → rollback(cancel) of the whole plan on the source while any item has not
 *     committed (cleaning/completed are left alone).
 *  5. A prepare the CC sent without an answer yet → send it again (the plan driver paces repeats).
 *  6. Destination ready → commit on the source with the destination's migration endpoint.
 *  6a. Re-join: a migrating source awaiting a credential (its NC lost the one of its commit before
 *     its hypervisor started the migration) gets a new pair of the generation it asks for: first the
 *     destination (prepare again: its hypervisor swaps its credential and from then on accepts only
 *     that generation), then, once the destination's record shows that generation, the source
 *     (commit again). A destination that no longer holds the record → give up (rule 3).
 *  7. Starts, plans oldest first and items in plan order, within the per-cluster, per-source and
 *     per-destination limits; an item whose destination is at its limit lets later items to other
 *     destinations go (no head-of-line blocking). Re-checked at this moment, never sent blind:
 *     an instance that stopped running fails; a destination that is disabled or being drained (unless
 *     the plan named it), unreachable, unhealthy, full or refused is replaced through placement, or
 *     the item fails — except that an unreachable or unhealthy one with no replacement is waited for
 *     up to prepareMs (a restarting NC must not fail a drain).
 *  8. A destination record whose item the source reports final (but not completed), or redirected
 *     to another destination → rollback on that destination. A record no plan explains is rolled
 *     back only while its source answers and still runs the VM (or while it is still preparing):
 *     the destination may otherwise hold the only copy. (The destination NC also keeps a VM that
 *     already runs there; this is the CC's half of that guard.)
 */
import { fits, sub, add, ZERO, type Resources } from '../../shared/model/resources.js';
import type { Incoming, MigrationPlan, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import { effectKey, type Effect } from './effects.js';
import { credentialLifetimeMs, phaseLimitMs, timeoutReason, type Mark, type Marks } from './marks.js';
import { quarantined, type MigrationNode } from './nodes.js';
import { inFlight, observedPhase, type Phase } from './phases.js';
import { placementNodes, UNPLACED_TEXT } from './planner.js';
import { planPlacement } from './placement.js';
import { drainingHosts, incomingAt, isFinal, itemKey, liveInstance, plansOf } from './plans.js';
import { reservationsOf, reservedOn } from './reservations.js';
import type { Limits } from './settings.js';

/** After this many destinations an item fails instead of being re-planned again. */
export const MAX_ATTEMPTS = 5;

export interface ReconcileInput {
  readonly nodes: readonly MigrationNode[];
  readonly marks: Marks;
  readonly limits: Limits;
  readonly now: number;
  /**
   * The CC has not yet heard from the CLC which hosts are fenced (planDriver.ts awaitFencedHosts): no
   * prepare is sent or resent and no commit is sent, since any destination might be a fenced host.
   */
  readonly fencedUnknown?: boolean;
}

export interface ReconcileResult {
  readonly effects: readonly Effect[];
  readonly marks: Marks;
  /** The next deadline: look again then even if nothing else happens. */
  readonly wakeAt: number | undefined;
}

interface Row {
  readonly plan: MigrationPlan;
  readonly item: PlanItem;
  readonly key: string;
  readonly phase: Exclude<Phase, 'final'>;
  readonly mark: Mark;
}

/** In-flight items per source, per destination and in all. */
class Slots {
  private readonly bySource = new Map<string, number>();
  private readonly byDestination = new Map<string, number>();
  total = 0;

  take(source: string, destination: string): void {
    this.bySource.set(source, this.source(source) + 1);
    this.byDestination.set(destination, this.destination(destination) + 1);
    this.total++;
  }

  source(host: string): number {
    return this.bySource.get(host) ?? 0;
  }

  destination(host: string): number {
    return this.byDestination.get(host) ?? 0;
  }
}

export function reconcile(input: ReconcileInput): ReconcileResult {
  const { nodes, now, limits } = input;
  const nodeOf = new Map(nodes.map((n) => [n.host, n]));
  const plans = plansOf(nodes);
  const marks = new Map<string, Mark>();
  const effects = new Map<string, Effect>();
  const emit = (e: Effect): void => { effects.set(effectKey(e), e); };
  const slots = new Slots();
  let wakeAt: number | undefined;
  const rows: Row[] = [];

  // Rules 1-2: phases, marks and timeouts.
  for (const plan of plans) {
    for (const item of plan.items) {
      const key = itemKey(plan.migrationId, item.instanceId);
      const record = incomingAt(nodeOf.get(item.destination), plan.migrationId, item.instanceId);
      let phase = observedPhase(item, record);
      if (phase === 'final') continue;
      const old = input.marks.get(key);
      const sameDestination = old !== undefined && old.destination === item.destination;
      const asked = phase === 'queued' && sameDestination && old.asked;
      if (asked) phase = 'preparing';
      const keepSince = sameDestination && old.phase === phase;
      // Rule 2: a pre-commit give-up does not outlive the commit it presumed lost.
      const committedSince = phase === 'migrating' && old !== undefined && old.phase !== 'migrating';
      let mark: Mark = {
        phase, destination: item.destination, since: keepSince ? old.since : now, asked,
        refused: old?.refused ?? [], ...(old?.giveUp !== undefined && phase !== 'cleaning' && !committedSince ? { giveUp: old.giveUp } : {}),
        ...(keepSince && phase === 'queued' && old.waitingSince !== undefined ? { waitingSince: old.waitingSince } : {}),
      };
      // A destination host HA fences never receives: roll back what has not completed (sim seed 730).
      if (mark.giveUp === undefined && phase !== 'queued' && phase !== 'cleaning' && nodeOf.get(item.destination)?.fenced === true) {
        mark = { ...mark, giveUp: `destination ${item.destination} is fenced by host HA` };
      }
      // Nor one an administrator quarantined (issue 18; the NC refuses the quarantine while it holds an Incoming record, so this is a backstop).
      const dest = nodeOf.get(item.destination);
      if (mark.giveUp === undefined && (phase === 'preparing' || phase === 'ready') && dest !== undefined && quarantined(dest)) {
        mark = { ...mark, giveUp: `destination ${item.destination} is quarantined` };
      }
      // Rule 6a: a re-join needs the destination's prepared domain; without it the item cannot complete.
      if (mark.giveUp === undefined && phase === 'migrating' && item.awaitingCredential === true && !record) {
        const d = nodeOf.get(item.destination);
        if (d?.reachable === true && d.migrationsKnown) mark = { ...mark, giveUp: `destination ${item.destination} no longer holds the incoming domain: the source cannot re-join` };
      }
      const limit = phaseLimitMs(phase, plan, item);
      if (limit !== undefined && mark.giveUp === undefined && !plan.cancelRequested) {
        const deadline = mark.since + limit;
        if (now >= deadline) mark = { ...mark, giveUp: timeoutReason(phase, item.destination, limit) };
        else wakeAt = Math.min(wakeAt ?? deadline, deadline);
      }
      marks.set(key, mark);
      if (inFlight(phase)) slots.take(plan.source, item.destination);
      rows.push({ plan, item, key, phase, mark });
    }
  }

  // Rules 3-6: undo, resend, commit.
  for (const { plan, item, phase, mark } of rows) {
    const src = nodeOf.get(plan.source);
    const dest = nodeOf.get(item.destination);
    const record = incomingAt(dest, plan.migrationId, item.instanceId);
    const undo = phase !== 'cleaning' && (mark.giveUp !== undefined || plan.cancelRequested);
    if (undo) {
      if (src?.reachable) {
        emit(plan.cancelRequested
          ? { kind: 'rollback', side: 'source', host: plan.source, migrationId: plan.migrationId, reason: 'migration cancelled', cancel: true }
          : { kind: 'rollback', side: 'source', host: plan.source, migrationId: plan.migrationId, instanceId: item.instanceId, reason: mark.giveUp ?? '', cancel: false });
      } else if (record?.state === 'preparing' && dest?.reachable) {
        emit(destinationRollback(item.destination, plan.migrationId, item.instanceId, `source ${plan.source} unreachable: ${mark.giveUp ?? 'migration cancelled'}`));
      }
      continue;
    }
    if (!src?.reachable || !dest?.reachable || input.fencedUnknown === true) continue;
    if (phase === 'preparing' && !record && mark.asked) {
      const inst = liveInstance(src, item.instanceId);
      if (inst && !strayElsewhere(nodes, plan, item)) emit(prepareEffect(plan, item, inst));
    } else if (phase === 'ready') {
      emit({
        kind: 'commit', migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, destination: item.destination,
        credentialLifetimeMs: credentialLifetimeMs(plan, item),
      });
    } else if (phase === 'migrating' && item.awaitingCredential === true && record && !strayElsewhere(nodes, plan, item)) {
      const e = rejoinEffect(plan, item, src, record);
      if (e) emit(e);
    }
  }

  // Rule 7: starts, re-checked at execution time.
  const extra = new Map<string, Resources>();
  const draining = drainingHosts(plans);
  const byKey = new Map(rows.map((r) => [r.key, r]));
  for (const plan of plans) {
    if (plan.cancelRequested) continue;
    const src = nodeOf.get(plan.source);
    if (!src?.reachable || !src.migrationsKnown) continue;
    for (const item of plan.items) {
      const row = byKey.get(itemKey(plan.migrationId, item.instanceId));
      if (!row || row.phase !== 'queued' || row.mark.giveUp !== undefined) continue;
      if (slots.total >= limits.perCluster || slots.source(plan.source) >= limits.perSource) break;
      const inst = liveInstance(src, item.instanceId);
      if (!inst || inst.state !== 'running') {
        emit(failEffect(plan, item, `instance ${item.instanceId} ${inst ? `is ${inst.state}` : 'is no longer on the source'}`));
        continue;
      }
      if (strayElsewhere(nodes, plan, item)) continue;
      const problem = destinationProblem(plan, item, row, nodeOf, nodes, extra, draining);
      if (problem === undefined) {
        if (slots.destination(item.destination) >= limits.perDestination) continue;
        emit(prepareEffect(plan, item, inst));
        marks.set(row.key, { ...row.mark, phase: 'preparing', asked: true, since: now, waitingSince: undefined });
        wakeAt = Math.min(wakeAt ?? now + plan.timeouts.prepareMs, now + plan.timeouts.prepareMs);
        slots.take(plan.source, item.destination);
        continue;
      }
      if (item.attempts >= MAX_ATTEMPTS) {
        emit(failEffect(plan, item, `${problem}; gave up after ${item.attempts} destinations`));
        continue;
      }
      const choice = replanTarget(plan, item, row, nodes, extra);
      if (choice.host === undefined) {
        // A destination that is only away for a moment (an NC restarting) is waited for, up to the
        // prepare timeout, when nothing else can take the item; disabled or full ones are not.
        const d = nodeOf.get(item.destination);
        const waitingSince = row.mark.waitingSince ?? now;
        const deadline = waitingSince + plan.timeouts.prepareMs;
        if (d !== undefined && (!d.reachable || !d.healthy) && now < deadline) {
          marks.set(row.key, { ...row.mark, waitingSince });
          wakeAt = Math.min(wakeAt ?? deadline, deadline);
          continue;
        }
        emit(failEffect(plan, item, `${problem}; no other destination: ${UNPLACED_TEXT[choice.reason]}`));
        continue;
      }
      emit({ kind: 'replan', migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, destination: choice.host, reason: problem });
      extra.set(choice.host, add(extra.get(choice.host) ?? ZERO, item.vmType));
      // It keeps its place in the order: the slot is held until its source confirms the new destination.
      slots.take(plan.source, choice.host);
    }
  }

  // Rule 8: destination records nobody will use.
  for (const n of nodes) {
    if (!n.reachable) continue;
    for (const r of n.incoming) {
      if (r.state === 'none') continue;
      const src = nodeOf.get(r.source);
      const plan = plans.find((p) => p.migrationId === r.migrationId);
      const item = plan?.items.find((i) => i.instanceId === r.instanceId);
      let why: string | undefined;
      if (!src) {
        // A source outside this partition: nothing to ask, so only a record that never received anything.
        if (r.state === 'preparing') why = `source ${r.source} is not in this partition`;
      } else if (!src.reachable || !src.migrationsKnown) {
        continue;
      } else if (!plan || !item) {
        const vm = liveInstance(src, r.instanceId);
        if (r.state === 'preparing' || (vm && vm.migrationState !== 'cleaning')) why = `source ${r.source} holds no such migration`;
      } else if (item.destination !== n.host) {
        // The source commits an item only to its own destination: this record never received it.
        why = `the item now goes to ${item.destination || 'nowhere'}`;
      } else if (isFinal(item.state) && item.state !== 'completed') {
        // The source's outcome says the VM stayed there.
        why = `the item is ${item.state}`;
      }
      if (why !== undefined) emit(destinationRollback(n.host, r.migrationId, r.instanceId, why));
    }
  }

  return { effects: [...effects.values()], marks, wakeAt };
}

/**
 * Never two destinations for one item: a stale record on a node we can reach is rolled back first
 * (rule 8). One on a node we cannot reach holds room there but can never be committed to.
 */
function strayElsewhere(nodes: readonly MigrationNode[], plan: MigrationPlan, item: PlanItem): boolean {
  return nodes.some((n) => n.reachable && n.host !== item.destination && incomingAt(n, plan.migrationId, item.instanceId) !== undefined);
}

function destinationRollback(host: string, migrationId: string, instanceId: string, reason: string): Effect {
  return { kind: 'rollback', side: 'destination', host, migrationId, instanceId, reason, cancel: false };
}

function failEffect(plan: MigrationPlan, item: PlanItem, error: string): Effect {
  return { kind: 'failItem', migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, error };
}

/**
 * Rule 6a, one step at a time: the destination's credential of the awaited generation first, so that
 * the source never streams with a pair its destination does not hold yet; then the source's.
 */
function rejoinEffect(plan: MigrationPlan, item: PlanItem, src: MigrationNode, record: Incoming): Effect | undefined {
  const generation = item.credentialGeneration ?? 0;
  const held = record.credentialGeneration ?? 0;
  if (held < generation) {
    const inst = liveInstance(src, item.instanceId);
    return inst ? prepareEffect(plan, item, inst, generation) : undefined;
  }
  // Held generation later than asked: not of this source's asking (the backstop decides). A record
  // not ready (still preparing it) is waited for, as before a first commit.
  if (held > generation || record.state !== 'ready') return undefined;
  return {
    kind: 'commit', migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, destination: item.destination,
    credentialLifetimeMs: credentialLifetimeMs(plan, item), credentialGeneration: generation,
  };
}

function prepareEffect(plan: MigrationPlan, item: PlanItem, inst: NonNullable<ReturnType<typeof liveInstance>>, generation = 0): Effect {
  return {
    kind: 'prepareDestination', migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, destination: item.destination,
    allowDisabled: namedAllowed(plan, item.destination), credentialLifetimeMs: credentialLifetimeMs(plan, item),
    ...(generation > 0 ? { credentialGeneration: generation } : {}),
    incoming: {
      migrationId: plan.migrationId, instanceId: item.instanceId, source: plan.source, reservationId: inst.reservationId,
      imageId: inst.imageId, ownerId: inst.ownerId, launchTime: inst.launchTime, vmType: item.vmType,
      // Its volumes move attached: the destination connects them before the source commits (issue 18).
      ...(inst.volumes !== undefined && inst.volumes.length > 0 ? { volumes: inst.volumes.map((v) => ({ ...v })) } : {}),
    },
  };
}

/** The plan named this host as an allowed destination: it may be used while disabled. */
function namedAllowed(plan: MigrationPlan, host: string): boolean {
  return plan.request.allowHosts && plan.request.destinations.includes(host);
}

/** Why the item's destination cannot take it now, or undefined when it can. */
function destinationProblem(
  plan: MigrationPlan, item: PlanItem, row: Row, nodeOf: ReadonlyMap<string, MigrationNode>,
  nodes: readonly MigrationNode[], extra: ReadonlyMap<string, Resources>, draining: ReadonlySet<string>,
): string | undefined {
  const host = item.destination;
  const d = nodeOf.get(host);
  if (!d) return `destination ${host || '(none)'} is not registered`;
  const refusal = row.mark.refused.find((r) => r.host === host);
  if (refusal) return `destination ${host} refused: ${refusal.reason}`;
  if (d.fenced) return `destination ${host} is fenced by host HA`;
  if (quarantined(d)) return `destination ${host} is quarantined`;
  if (!d.reachable) return `destination ${host} is unreachable`;
  if (!d.healthy) return `destination ${host} is unhealthy`;
  if (!d.enabled && !namedAllowed(plan, host)) return `destination ${host} is disabled`;
  if (draining.has(host) && !namedAllowed(plan, host)) return `destination ${host} is being drained`;
  const others = reservationsOf(nodes, row.key);
  const free = sub(sub(sub(d.capacity, d.committed), reservedOn(others, host)), extra.get(host) ?? ZERO);
  if (!fits(item.vmType, free)) return `destination ${host} is full`;
  return undefined;
}

/** A new destination through placement, honouring the plan's allow/deny set and avoiding refusals. */
function replanTarget(
  plan: MigrationPlan, item: PlanItem, row: Row, nodes: readonly MigrationNode[], extra: ReadonlyMap<string, Resources>,
): { host: string; reason?: undefined } | { host?: undefined; reason: keyof typeof UNPLACED_TEXT } {
  const avoid = new Set([item.destination, ...row.mark.refused.map((r) => r.host)]);
  const pNodes = placementNodes(nodes, row.key).map((n) => ({
    ...n, usable: n.usable && !avoid.has(n.host), used: add(n.used, extra.get(n.host) ?? ZERO),
  }));
  const r = planPlacement(pNodes, [{ instanceId: item.instanceId, source: plan.source, resources: item.vmType }], {
    hosts: plan.request.destinations, allow: plan.request.allowHosts,
  });
  const placed = r.placements[0];
  if (placed) return { host: placed.destination };
  return { reason: r.unplaced[0]?.reason ?? 'no-eligible-destination' };
}
