/**
 * ccMigrateInstances as a pure function: the request and the partition in, a plan (or the coded
 * reason there is none) out. Nothing is changed and nothing reserved on refusal: the plan only
 * starts to hold capacity once its source NC has persisted it and the CC's view carries it.
 * Checks run in a fixed order, so one bad request always gets the same answer.
 */
import { add } from '../../shared/model/resources.js';
import type { FerryError } from '../../shared/errors/registry.js';
import type { IdSource } from '../../shared/model/ids.js';
import type { MigrationPlan, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import type { NcInstance } from '../../shared/protocol/ncProtocol.js';
import { CcErrors } from '../errors.js';
import { isColdMovable } from '../rehome.js';
import type { MigrationNode } from './nodes.js';
import { quarantined, usable } from './nodes.js';
import { eligibleDestinations, planPlacement, type DestinationFilter, type PlacementNode, type UnplacedReason } from './placement.js';
import { activeItemOf, drainingHosts, isActivePlan, plansOf } from './plans.js';
import { reservationsOf, reservedOn } from './reservations.js';
import type { Limits, Timeouts } from './settings.js';

export interface MigrateRequest {
  readonly sourceHost?: string | undefined;
  readonly instanceId?: string | undefined;
  readonly destinations: readonly string[];
  readonly allowHosts: boolean;
  readonly reserveDestinations: boolean;
  readonly partial: boolean;
}

export interface PlannerContext {
  readonly partition: string;
  readonly now: number;
  readonly newHex: IdSource;
  readonly limits: Limits;
  readonly timeouts: Timeouts;
}

export interface Unplaced {
  readonly instanceId: string;
  readonly reason: UnplacedReason;
}

export type PlanOutcome =
  | { readonly ok: true; readonly plan: MigrationPlan; readonly unplaced: readonly Unplaced[] }
  /**
   * `coldOnly`: a drain of a node that runs nothing live but holds instances its user stopped (issue
   * 18 part 5): no live plan (`error` says NothingToMigrate live); the CC re-homes them by cold moves
   * (cc/rehome.ts), then records them as a finished plan of cold items (coldMovePlan), so the drain
   * answers like any other.
   */
  | { readonly ok: false; readonly error: FerryError; readonly coldOnly?: string };

/** The error text an unplaced item carries in the plan. */
export const UNPLACED_TEXT: Readonly<Record<UnplacedReason, string>> = {
  'no-eligible-destination': 'no eligible destination',
  'too-large': 'larger than any eligible destination',
  'insufficient-capacity': 'no eligible destination has room left',
};

const refuse = (error: FerryError): PlanOutcome => ({ ok: false, error });

const iso = (ms: number | undefined): string => new Date(ms ?? 0).toISOString();

/**
 * Placement's view of the nodes: what runs on them plus what active plans hold there. A node being
 * drained counts as disabled (a destination only when named), so two drains never swap VMs.
 */
export function placementNodes(nodes: readonly MigrationNode[], except?: string): PlacementNode[] {
  const r = reservationsOf(nodes, except);
  const draining = drainingHosts(plansOf(nodes));
  return nodes.map((n) => ({
    host: n.host, enabled: n.enabled && !draining.has(n.host), usable: usable(n) && !n.fenced && !quarantined(n), capacity: n.capacity,
    used: add(n.committed, reservedOn(r, n.host)),
  }));
}

/** A migration id no plan the NCs hold has. */
export function newMigrationId(plans: readonly Pick<MigrationPlan, 'migrationId'>[], newHex: IdSource): string {
  const taken = new Set(plans.map((p) => p.migrationId));
  let migrationId = `mig-${newHex()}`;
  // A random 32-bit id can repeat; a few draws make a clash with a plan the NCs still hold vanishingly rare.
  for (let tries = 0; taken.has(migrationId) && tries < 8; tries++) migrationId = `mig-${newHex()}`;
  return migrationId;
}

export function planMigration(req: MigrateRequest, nodes: readonly MigrationNode[], ctx: PlannerContext): PlanOutcome {
  const { partition } = ctx;
  if ((req.sourceHost === undefined) === (req.instanceId === undefined)) {
    return refuse(CcErrors.make('InvalidParameterCombination', { detail: 'give exactly one of sourceHost (drain a node) and instanceId (move one instance)' }));
  }
  const destinations = [...new Set(req.destinations)];
  const unknownDest = destinations.find((h) => !nodes.some((n) => n.host === h));
  if (unknownDest !== undefined) return refuse(CcErrors.make('NodeNotFound', { host: unknownDest, partition }));
  // A quarantined node takes nothing, even when named (issue 18); naming it among the denied ones is harmless.
  const quarantinedDest = req.allowHosts ? nodes.find((n) => destinations.includes(n.host) && quarantined(n)) : undefined;
  if (quarantinedDest !== undefined) {
    return refuse(CcErrors.make('NodeQuarantined', { host: quarantinedDest.host, since: iso(quarantinedDest.quarantinedSince), detail: 'a quarantined node is never a migration destination, even when named' }));
  }

  const plans = plansOf(nodes);
  let source: MigrationNode | undefined;
  let candidates: NcInstance[];
  if (req.sourceHost !== undefined) {
    const host = req.sourceHost;
    source = nodes.find((n) => n.host === host);
    if (!source) return refuse(CcErrors.make('NodeNotFound', { host, partition }));
    candidates = source.instances.filter((i) => i.state === 'running');
  } else {
    const id = req.instanceId as string;
    source = nodes.find((n) => n.instances.some((i) => i.instanceId === id && i.state !== 'terminated'))
      ?? nodes.find((n) => n.instances.some((i) => i.instanceId === id));
    const inst = source?.instances.find((i) => i.instanceId === id);
    if (!source || !inst) return refuse(CcErrors.make('InstanceNotFound', { instanceId: id, partition }));
    if (inst.state !== 'running') return refuse(CcErrors.make('InstanceNotRunning', { instanceId: id, state: inst.state }));
    candidates = [inst];
  }
  const src = source;
  if (req.allowHosts && destinations.includes(src.host)) return refuse(CcErrors.make('DestinationIsSource', { host: src.host }));
  if (!src.reachable) return refuse(CcErrors.make('NodeUnreachable', { host: src.host, detail: 'its NC did not answer the last poll' }));

  if (req.sourceHost !== undefined && quarantined(src)) {
    // Its instances move only when an administrator names them, one by one (issue 18).
    const ids = candidates.map((i) => i.instanceId);
    const named = ids.length > 0 ? `name each instance to move it (MigrateInstances InstanceId=...): ${ids.join(', ')}` : 'it runs no instance that could be migrated';
    return refuse(CcErrors.make('NodeQuarantined', { host: src.host, since: iso(src.quarantinedSince), detail: `a quarantined node is not drained; ${named}` }));
  }
  if (req.sourceHost !== undefined) {
    const draining = plans.find((p) => p.source === src.host && p.request.kind === 'drain' && isActivePlan(p));
    if (draining) return refuse(CcErrors.make('MigrationInProgress', { subject: `node ${src.host}`, migrationId: draining.migrationId }));
    if (candidates.length === 0) {
      const nothing = CcErrors.make('NothingToMigrate', { host: src.host });
      return src.instances.some(isColdMovable) ? { ok: false, error: nothing, coldOnly: src.host } : refuse(nothing);
    }
  }
  for (const inst of candidates) {
    const busy = activeItemOf(plans, inst.instanceId);
    if (busy) return refuse(CcErrors.make('MigrationInProgress', { subject: `instance ${inst.instanceId}`, migrationId: busy.plan.migrationId }));
    // The NC says it moves, though no plan the CC has seen says so: refuse rather than race it.
    if (inst.migrationState !== 'none') return refuse(CcErrors.make('MigrationInProgress', { subject: `instance ${inst.instanceId}`, migrationId: 'a migration not yet reported' }));
  }

  const filter: DestinationFilter = { hosts: destinations, allow: req.allowHosts };
  const pNodes = placementNodes(nodes);
  if (eligibleDestinations(pNodes, src.host, filter).length === 0) {
    const detail = req.allowHosts && destinations.length > 0
      ? `every allowed destination (${destinations.join(', ')}) is unreachable, unhealthy or the source`
      : `no other node is enabled, reachable and healthy${destinations.length > 0 ? ' outside the denied hosts' : ''}`;
    return refuse(CcErrors.make('NoEligibleDestination', { source: src.host, detail }));
  }
  const result = planPlacement(pNodes, candidates.map((i) => ({ instanceId: i.instanceId, source: src.host, resources: i.vmType })), filter);
  if (result.unplaced.length > 0 && (!req.partial || result.placements.length === 0)) {
    return refuse(CcErrors.make('InsufficientCapacityForMigration', {
      count: result.unplaced.length, total: candidates.length,
      unplaced: result.unplaced.map((u) => `${u.instanceId} (${u.reason})`).join(', '),
    }));
  }

  const migrationId = newMigrationId(plans, ctx.newHex);

  const destOf = new Map(result.placements.map((p) => [p.instanceId, p.destination]));
  const why = new Map(result.unplaced.map((u) => [u.instanceId, u.reason]));
  const items: PlanItem[] = candidates.map((i) => {
    const destination = destOf.get(i.instanceId);
    if (destination !== undefined) {
      return { instanceId: i.instanceId, vmType: i.vmType, destination, state: 'queued', attempts: 1, queuedAt: ctx.now };
    }
    const reason = why.get(i.instanceId) ?? 'no-eligible-destination';
    return {
      instanceId: i.instanceId, vmType: i.vmType, destination: '', state: 'failed', attempts: 0,
      error: `not placed: ${UNPLACED_TEXT[reason]}`, queuedAt: ctx.now, endedAt: ctx.now,
    };
  });
  const plan: MigrationPlan = {
    migrationId, source: src.host, createdAt: ctx.now,
    request: { kind: req.sourceHost !== undefined ? 'drain' : 'instance', destinations, allowHosts: req.allowHosts, reserveDestinations: req.reserveDestinations },
    limits: ctx.limits, timeouts: ctx.timeouts, cancelRequested: false, items,
  };
  return { ok: true, plan, unplaced: result.unplaced };
}
