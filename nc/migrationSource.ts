/**
 * Source side of live migration as pure decisions and store transitions (STYLE habit 1): what a
 * prepare, commit, replan or rollback does to the stored plan and the instance records, how a
 * migration's outcome ends its item, and the source-side timeouts. The item executor
 * (migrationItemExecutor.ts) executes them against the store and the hypervisor.
 *
 * Item states on the source (migrationProtocol.ts): a prepared item stays `queued` until commit;
 * the source is never told when its destination is prepared, so it never persists preparing/ready.
 * Every state change is a row of migrationSourceTable.ts (state × trigger → next, guard, effects):
 * the decide functions below select rows (after the look-ups that are no state's business), the
 * apply functions run the selected row on a store draft. The instance's migrationState follows:
 * ready while queued, migrating, cleaning, none otherwise.
 */
import { ncMigrationEnded } from '../shared/metrics/channels.js';
import type { ErrorFields } from '../shared/errors/registry.js';
import type { ItemState, MigrationPlan, NcMigrateRequest, PlanItem } from '../shared/protocol/migrationProtocol.js';
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import type { NcErrorCode } from './errors.js';
import { deriveState, observedState, type Observation } from './instanceView.js';
import type { NcSnapshot, StoredItem, StoredPlan } from './ncStore.js';
import {
  selectSourceRow, type CompletedStats, type InstanceEffect, type ItemStep, type MigrationOutcome, type SourceDecisions,
  type SourcePayloads, type SourceTrigger,
} from './migrationSourceTable.js';

export type { CompletedStats, MigrationOutcome };

export type Refusal = { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields };
type Request<A extends NcMigrateRequest['action']> = Extract<NcMigrateRequest, { action: A }>;
export type CommitRequest = Request<'commit'>;
export type ReplanRequest = Request<'replan'>;
export type RollbackRequest = Request<'rollback'>;

const refuse = (code: NcErrorCode, fields: ErrorFields): Refusal => ({ kind: 'refuse', code, fields });

export function isFinal(state: ItemState): boolean {
  return FINAL_ITEM_STATES.includes(state);
}

export function planFinished(plan: { readonly items: readonly { readonly state: ItemState }[] }): boolean {
  return plan.items.every((i) => isFinal(i.state));
}

/**
 * The hypervisor's id for one item's migration. Both NCs derive it from (migrationId, instanceId),
 * so the destination prepares exactly the stream the source sends; an item is committed at most
 * once, so the id never names two migrations on one source.
 */
export function hypervisorMigrationId(migrationId: string, instanceId: string): string {
  return `${migrationId}-${instanceId}`;
}

export function findItem(snapshot: NcSnapshot, migrationId: string, instanceId: string): StoredItem | undefined {
  return snapshot.plans[migrationId]?.items.find((i) => i.instanceId === instanceId);
}

/** The plan holding `instanceId` in a non-final item, if any. */
export function activePlanOf(snapshot: NcSnapshot, instanceId: string): string | undefined {
  for (const plan of Object.values(snapshot.plans)) {
    if (plan.items.some((i) => i.instanceId === instanceId && !isFinal(i.state))) return plan.migrationId;
  }
  return undefined;
}

// --- prepare ---

export interface SourcePrepareInput {
  readonly host: string;
  readonly snapshot: NcSnapshot;
  readonly plan: MigrationPlan;
  /** A list() taken for this request: source prepare is the check that every domain runs. */
  readonly observation: Observation | undefined;
  readonly now: number;
}

export type SourcePrepareDecision =
  /** The migration id is known: answer with the plan as held (whatever this request carried). */
  | { readonly kind: 'answer'; readonly plan: StoredPlan }
  /** Persist `plan` with applySourcePrepare, then answer it. */
  | { readonly kind: 'accept'; readonly plan: StoredPlan }
  | Refusal;

/** What makes a plan unusable on this node, or undefined. */
function planProblem(host: string, plan: MigrationPlan): string | undefined {
  if (plan.source !== host) return `its source is ${plan.source}`;
  const seen = new Set<string>();
  for (const item of plan.items) {
    if (seen.has(item.instanceId)) return `instance ${item.instanceId} appears twice`;
    seen.add(item.instanceId);
    if (item.cold === true) {
      // A cold move the CC made before recording it (issue 18): born final, never run here.
      if (item.state !== 'completed' && item.state !== 'failed') return `cold item ${item.instanceId} is ${item.state}; a cold move is recorded completed or failed`;
      continue;
    }
    if (item.state !== 'queued' && item.state !== 'failed') return `item ${item.instanceId} is ${item.state}; a new plan holds queued or failed items`;
    if (item.state === 'queued' && item.destination === '') return `queued item ${item.instanceId} has no destination`;
    if (item.destination === host) return `item ${item.instanceId} goes to its own source`;
  }
  return undefined;
}

export function decideSourcePrepare(input: SourcePrepareInput): SourcePrepareDecision {
  const { host, snapshot, plan, now } = input;
  const migrationId = plan.migrationId;
  const known = snapshot.plans[migrationId];
  if (known) return { kind: 'answer', plan: known };
  const problem = planProblem(host, plan);
  if (problem) return refuse('MigrationPlanInvalid', { host, migrationId, detail: problem });
  if (plan.request.kind === 'drain') {
    const drain = Object.values(snapshot.plans).find((p) => p.request.kind === 'drain' && !planFinished(p));
    if (drain) return refuse('MigrationInProgress', { host, subject: `node ${host}`, migrationId: drain.migrationId });
  }
  for (const item of plan.items) {
    if (item.state === 'failed' || item.cold === true) continue; // unplaced by the CC, or a cold move it made: recorded, never prepared
    const id = item.instanceId;
    const rec = snapshot.instances[id];
    if (!rec || rec.phase === 'terminated') return refuse('InstanceNotFound', { host, instanceId: id });
    const observed = observedState(input.observation, id);
    // A paused instance migrates too (issue 18): its domain is suspended and arrives suspended.
    if (rec.phase !== 'running' || (observed !== 'running' && observed !== 'suspended')) {
      const state = deriveState(rec.phase, observed);
      return refuse('InstanceNotRunning', { host, instanceId: id, state: state === 'running' ? `${state} (hypervisor: ${observed})` : state });
    }
    const other = activePlanOf(snapshot, id);
    if (other) return refuse('MigrationInProgress', { host, subject: `instance ${id}`, migrationId: other });
  }
  const stored: StoredPlan = {
    ...structuredClone(plan),
    items: plan.items.map((i) => ({ ...structuredClone(i), progress: undefined, stats: undefined })),
    receivedAt: now,
  };
  if (planFinished(stored)) stored.finishedAt = now;
  return { kind: 'accept', plan: stored };
}

/** Store transition: the plan and, for each queued item, its instance ready to send. One write. */
export function applySourcePrepare(draft: NcSnapshot, plan: StoredPlan): void {
  draft.plans[plan.migrationId] = plan;
  for (const item of plan.items) if (item.cold !== true) applyRow(draft, plan.migrationId, item.instanceId, 'prepared', {}, 'ready');
}

// --- commit ---

export type CommitDecision =
  /** Already committed to that destination (migrating, cleaning, completed): answer the plan. */
  | { readonly kind: 'answer'; readonly plan: StoredPlan }
  /** Persist applyCommit, answer, and start the hypervisor migration in the background. */
  | { readonly kind: 'start'; readonly plan: StoredPlan; readonly item: StoredItem }
  /** The credential an awaiting item asked for: persist applyRejoin, answer, start the migration with it. */
  | { readonly kind: 'rejoin'; readonly plan: StoredPlan; readonly item: StoredItem }
  | Refusal;

/**
 * `generation`: of the request's credential, as its certificate names it (undefined: no credential,
 * or not a readable one). Only a re-join looks at it: a late commit of an older generation is answered
 * and dropped (its destination no longer accepts it).
 */
export function decideCommit(host: string, snapshot: NcSnapshot, req: CommitRequest, generation?: number): CommitDecision {
  const { migrationId, instanceId } = req;
  const notPrepared = (detail: string): Refusal => refuse('MigrationNotPrepared', { host, migrationId, instanceId, detail });
  const plan = snapshot.plans[migrationId];
  if (!plan) return notPrepared('no such migration on this node');
  const item = plan.items.find((i) => i.instanceId === instanceId);
  if (!item) return notPrepared('the plan has no such item');
  if (item.destination !== req.destination) return notPrepared(`the item goes to ${item.destination || 'no destination'}, not ${req.destination}`);
  const awaitedCredential = req.credential !== undefined && generation === (item.credentialGeneration ?? 0);
  const p = commitPayload(snapshot, req, 0, awaitedCredential);
  const row = selectSourceRow('commit', item, p);
  switch (row?.decides) {
    case 'rejoin': return { kind: 'rejoin', plan, item };
    case 'answer': return { kind: 'answer', plan };
    case 'start': return { kind: 'start', plan, item };
    default: return notPrepared(row?.refusal?.detail(item, p) ?? `the item is ${item.state}`);
  }
}

function commitPayload(snapshot: NcSnapshot, req: CommitRequest, now: number, awaitedCredential: boolean): SourcePayloads['commit'] {
  const rec = snapshot.instances[req.instanceId];
  return {
    destinationUri: req.destinationUri, now, instanceReady: rec?.migrationState === 'ready', awaitedCredential,
    instance: rec ? `migration state ${rec.migrationState}` : 'gone',
  };
}

/** Store transition: item and instance migrating, with what a restarted NC needs to re-join. */
export function applyCommit(draft: NcSnapshot, req: CommitRequest, now: number): void {
  applyRow(draft, req.migrationId, req.instanceId, 'commit', commitPayload(draft, req, now, false), 'start');
}

// --- re-join with a re-issued credential ---

/**
 * Store transition: the hypervisor refused to re-join a migrating item without a credential (it
 * never got the migration; the credential died with the last NC process). The item asks for the
 * next generation, superseding every credential issued for it so far; the CC re-issues both sides.
 */
export function applyAwaitCredential(draft: NcSnapshot, migrationId: string, instanceId: string, now: number): number {
  const outcome: MigrationOutcome = { kind: 'failed', error: '', domain: 'present', needsCredential: true };
  applyRow(draft, migrationId, instanceId, 'outcome', { outcome, progress: undefined, now }, 'await-credential');
  return mustItem(draft, migrationId, instanceId).credentialGeneration ?? 0;
}

/** Store transition: the awaited credential arrived; the migration starts with it (a crash before that asks for the next). */
export function applyRejoin(draft: NcSnapshot, migrationId: string, instanceId: string): void {
  applyRow(draft, migrationId, instanceId, 'commit', { destinationUri: '', now: 0, instanceReady: false, awaitedCredential: true, instance: '' }, 'rejoin');
}

// --- replan ---

export type ReplanDecision =
  /** Nothing to change (a repeat): answer the plan. */
  | { readonly kind: 'answer'; readonly plan: StoredPlan }
  | { readonly kind: 'move'; readonly destination: string }
  | { readonly kind: 'fail'; readonly error: string }
  | Refusal;

export function decideReplan(host: string, snapshot: NcSnapshot, req: ReplanRequest): ReplanDecision {
  const { migrationId, instanceId } = req;
  const plan = snapshot.plans[migrationId];
  const item = plan?.items.find((i) => i.instanceId === instanceId);
  if (!plan || !item) return refuse('MigrationNotPrepared', { host, migrationId, instanceId, detail: plan ? 'the plan has no such item' : 'no such migration on this node' });
  const p = replanPayload(host, req, 0);
  const row = selectSourceRow('replan', item, p);
  if (!row) return { kind: 'answer', plan };
  switch (row.decides) {
    case 'answer': return { kind: 'answer', plan };
    case 'fail': return { kind: 'fail', error: req.error || 'no destination left for this instance' };
    case 'move': return { kind: 'move', destination: req.destination };
    case 'invalid': return refuse('MigrationPlanInvalid', { host, migrationId, detail: row.refusal?.detail(item, p) ?? '' });
    case 'refuse': return refuse('MigrationNotPrepared', { host, migrationId, instanceId, detail: row.refusal?.detail(item, p) ?? '' });
  }
}

const replanPayload = (host: string, req: ReplanRequest, now: number): SourcePayloads['replan'] =>
  ({ host, destination: req.destination, error: req.error ?? '', now });

export function applyReplanMove(draft: NcSnapshot, migrationId: string, instanceId: string, destination: string): void {
  applyRow(draft, migrationId, instanceId, 'replan', { host: '', destination, error: '', now: 0 }, 'move');
}

/** Store transition: no destination is left for a queued item; it takes the contract's unplaced shape. */
export function applyReplanFail(draft: NcSnapshot, migrationId: string, instanceId: string, error: string, now: number): void {
  applyRow(draft, migrationId, instanceId, 'replan', { host: '', destination: '', error, now }, 'fail');
}

// --- rollback ---

export type SourceRollbackDecision =
  /** Unknown plan or item, or nothing left to undo: answer as success. */
  | { readonly kind: 'nothing' }
  | {
    readonly kind: 'apply';
    /** Not committed: end now (rolled-back or cancelled). */
    readonly end: readonly string[];
    /** Migrating: record the abort, then abort the hypervisor migration; the outcome ends them. */
    readonly abort: readonly string[];
    readonly setCancelRequested: boolean;
    readonly reason: string;
  };

export function decideSourceRollback(snapshot: NcSnapshot, req: RollbackRequest): SourceRollbackDecision {
  const plan = snapshot.plans[req.migrationId];
  if (!plan) return { kind: 'nothing' };
  const items = req.instanceId ? plan.items.filter((i) => i.instanceId === req.instanceId) : plan.items;
  const reason = req.reason || (req.cancel ? 'cancelled' : 'rolled back');
  const p: SourcePayloads['rollback'] = { reason, cancel: req.cancel, now: 0 };
  const decided = (d: SourceDecisions['rollback']): string[] => items.filter((i) => selectSourceRow('rollback', i, p)?.decides === d).map((i) => i.instanceId);
  const end = decided('end');
  // A repeat re-sends the abort (the first may not have reached the hypervisor); the first reason stays.
  const abort = decided('abort');
  const setCancelRequested = req.cancel && !req.instanceId && !plan.cancelRequested;
  if (end.length === 0 && abort.length === 0 && !setCancelRequested) return { kind: 'nothing' };
  return { kind: 'apply', end, abort, setCancelRequested, reason };
}

/** Store transition of a rollback's item: ended if uncommitted, its abort recorded if migrating. */
export function applyRollback(draft: NcSnapshot, migrationId: string, instanceId: string, reason: string, cancel: boolean, now: number): void {
  applyRow(draft, migrationId, instanceId, 'rollback', { reason, cancel, now });
}

/** Store transition: a source timeout's abort, recorded before the hypervisor is asked, so a restart repeats it. */
export function applyTimeoutAbort(draft: NcSnapshot, migrationId: string, instanceId: string, reason: string): void {
  applyRow(draft, migrationId, instanceId, 'timeout', { reason });
}

// --- endings ---

/**
 * Store transition: the item ends without moving the VM (rolled-back, cancelled, failed); the
 * instance is this node's plain instance again. Marks the plan finished with its last item.
 */
export function endItem(draft: NcSnapshot, migrationId: string, instanceId: string, state: ItemState, error: string, now: number): void {
  applyRow(draft, migrationId, instanceId, 'end', { state, error, now });
}

/** Store transition: the VM runs on the destination (`stats` undefined: inferred); what is left here is being removed. */
export function applyCleaning(draft: NcSnapshot, migrationId: string, instanceId: string, stats: CompletedStats | undefined, progress: PlanItem['progress']): void {
  const outcome: MigrationOutcome = stats ? { kind: 'completed', stats } : { kind: 'failed', error: '', domain: 'missing' };
  applyRow(draft, migrationId, instanceId, 'outcome', { outcome, progress, now: 0 }, 'cleaning');
}

/** Store transition, one write: the instance record leaves this node and the item completes. */
export function applyCompleted(draft: NcSnapshot, migrationId: string, instanceId: string, now: number): void {
  // No tombstone: if the instance ever migrates back, a terminated record would destroy it. The plan
  // item is what answers late messages about this migration.
  applyRow(draft, migrationId, instanceId, 'cleaned', { now });
}

/** Store transition: the outcome ended the item with the VM still here (rolled-back or cancelled). */
export function applyOutcomeEnd(draft: NcSnapshot, migrationId: string, instanceId: string, outcome: MigrationOutcome, now: number): void {
  applyRow(draft, migrationId, instanceId, 'outcome', { outcome, progress: undefined, now });
}

export type OutcomeDecision =
  /** The VM runs on the destination: go to cleaning (stats unknown when only inferred). */
  | { readonly next: 'cleaning'; readonly stats: CompletedStats | undefined; readonly inferred: boolean }
  /** The VM is still here and never left: ask the CC for a re-issued credential (applyAwaitCredential). */
  | { readonly next: 'await-credential' }
  /** The VM is still here: end the item. */
  | { readonly next: 'rolled-back' | 'cancelled'; readonly error: string }
  /** The item is no longer migrating: settled already (a rollback waited for it). */
  | { readonly next: 'settled' };

/**
 * A failed migration whose domain is still here was undone (the hypervisor resumes it here before
 * reporting failure). One whose domain is gone from here moved: commit checked that the domain ran
 * here, and the hypervisor removes the source domain only after the destination confirmed, so
 * "failed" then means "its outcome record was lost" (a hypervisor restarted after completing it).
 * A re-join refused for want of a credential never started: unless an abort was asked, the item
 * waits for a re-issued one instead of losing its work.
 */
export function decideOutcome(item: StoredItem, outcome: MigrationOutcome): OutcomeDecision {
  const row = selectSourceRow('outcome', item, { outcome, progress: undefined, now: 0 });
  switch (row?.decides) {
    case 'cleaning': return outcome.kind === 'completed' ? { next: 'cleaning', stats: outcome.stats, inferred: false } : { next: 'cleaning', stats: undefined, inferred: true };
    case 'await-credential': return { next: 'await-credential' };
    case 'rolled-back':
    case 'cancelled':
      return { next: row.decides, error: item.abort?.reason ?? (outcome.kind === 'failed' ? outcome.error : '') };
    default: return { next: 'settled' };
  }
}

// --- timeouts ---

export type Timeouts = MigrationPlan['timeouts'];

/** Allowed migrating time: base + per-GiB × memory (KubeVirt's completionTimeoutPerGiB idea). */
export function migratingAllowanceMs(t: Timeouts, memoryMiB: number): number {
  return t.migratingBaseMs + Math.ceil((t.migratingPerGiBMs * memoryMiB) / 1024);
}

/**
 * Why a migrating item must be aborted now, or undefined. `lastProgressAt`: last time bytes moved;
 * undefined for an item awaiting a credential (nothing moves until it comes: only the allowance,
 * counted from the commit, bounds the wait).
 */
export function timeoutReason(item: StoredItem, t: Timeouts, lastProgressAt: number | undefined, now: number): string | undefined {
  if (item.state !== 'migrating' || item.abort || item.startedAt === undefined) return undefined;
  const allowed = migratingAllowanceMs(t, item.vmType.memoryMiB);
  if (now - item.startedAt >= allowed) return `migration timed out: not completed within ${allowed} ms`;
  if (lastProgressAt !== undefined && now - lastProgressAt >= t.stallMs) return `migration stalled: no progress for ${t.stallMs} ms`;
  return undefined;
}

/**
 * Runs the row `trigger` selects for the item on the draft (when `expect` is given, only if the row
 * decides that): the item replaced, the instance record changed, the plan finished with its last item.
 */
function applyRow<K extends SourceTrigger>(draft: NcSnapshot, migrationId: string, instanceId: string, trigger: K, p: SourcePayloads[K], expect?: SourceDecisions[K]): void {
  const plan = draft.plans[migrationId];
  const item = mustItem(draft, migrationId, instanceId);
  const row = selectSourceRow(trigger, item, p);
  if (!row?.run || (expect !== undefined && row.decides !== expect) || !plan) return;
  const step: ItemStep = row.run(item, p);
  plan.items[plan.items.indexOf(item)] = step.next;
  if (isFinal(step.next.state) && !isFinal(item.state)) {
    const stats = step.next.stats;
    ncMigrationEnded.publish({
      outcome: step.next.state,
      ...(stats ? { elapsedMs: stats.elapsedMs, downtimeMs: stats.downtimeMs, bytesTransferred: stats.bytesTransferred } : {}),
    });
  }
  if (step.instance) applyInstanceEffect(draft, migrationId, instanceId, step.instance);
  if (isFinal(step.next.state) && step.next.endedAt !== undefined && planFinished(plan)) plan.finishedAt = step.next.endedAt;
}

function applyInstanceEffect(draft: NcSnapshot, migrationId: string, instanceId: string, effect: InstanceEffect): void {
  const rec = draft.instances[instanceId];
  if (!rec) return;
  if (effect.kind === 'migrationState') {
    rec.migrationState = effect.state;
    if (effect.state === 'ready') rec.migrationId = migrationId;
  } else if (rec.migrationId === migrationId) {
    if (effect.kind === 'remove') {
      delete draft.instances[instanceId];
    } else {
      rec.migrationState = 'none';
      delete rec.migrationId;
    }
  }
}

function mustItem(draft: NcSnapshot, migrationId: string, instanceId: string): StoredItem {
  const item = draft.plans[migrationId]?.items.find((i) => i.instanceId === instanceId);
  // A programming-invariant assert (uncoded on purpose): unreachable while only the mailbox writes the store.
  if (!item) throw new Error(`plan item ${migrationId}/${instanceId} vanished inside the mailbox`);
  return item;
}
