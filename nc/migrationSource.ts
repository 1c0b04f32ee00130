/**
 * Source side of live migration as pure decisions and store transitions (STYLE habit 1): what a
 * prepare, commit, replan or rollback does to the stored plan and the instance records, how a
 * migration's outcome ends its item, and the source-side timeouts. The item executor
 * (migrationItemExecutor.ts) executes them against the store and the hypervisor.
 *
 * Item states on the source (migrationProtocol.ts): a prepared item stays `queued` until commit;
 * the source is never told when its destination is prepared, so it never persists preparing/ready.
 *   queued ─commit─▶ migrating ─success─▶ cleaning ─record removed─▶ completed
 *     │                 ├─failure / abort / timeout, VM still here─▶ rolled-back | cancelled
 *     │                 └─re-join refused for want of the credential the last process lost (the
 *     │                   hypervisor never got the migration)─▶ migrating, awaiting generation n+1
 *     │                   ─commit with that generation's credential─▶ migrating (started again)
 *     ├─replan─▶ queued (new destination, attempts + 1) | failed (destination '')
 *     └─rollback─▶ rolled-back | cancelled
 * The instance's migrationState follows: ready while queued, migrating, cleaning, none otherwise.
 */
import type { ErrorFields } from '../shared/errors/registry.js';
import type { ItemState, MigrationPlan, NcMigrateRequest, PlanItem } from '../shared/protocol/migrationProtocol.js';
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import type { NcErrorCode } from './errors.js';
import { deriveState, observedState, type Observation } from './instanceView.js';
import type { NcSnapshot, StoredItem, StoredPlan } from './ncStore.js';

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
    if (item.state === 'failed') continue; // unplaced by the CC: recorded, never prepared
    const id = item.instanceId;
    const rec = snapshot.instances[id];
    if (!rec || rec.phase === 'terminated') return refuse('InstanceNotFound', { host, instanceId: id });
    const observed = observedState(input.observation, id);
    if (rec.phase !== 'running' || observed !== 'running') {
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
  for (const item of plan.items) {
    const rec = draft.instances[item.instanceId];
    if (item.state !== 'queued' || !rec) continue;
    rec.migrationState = 'ready';
    rec.migrationId = plan.migrationId;
  }
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
  if (item.state === 'migrating' && item.awaitingCredential === true && !item.abort && req.credential && generation === (item.credentialGeneration ?? 0)) {
    return { kind: 'rejoin', plan, item };
  }
  if (item.state === 'migrating' || item.state === 'cleaning' || item.state === 'completed') return { kind: 'answer', plan };
  if (item.state !== 'queued') return notPrepared(`the item is ${item.state}`);
  const rec = snapshot.instances[instanceId];
  if (rec?.migrationState !== 'ready') return notPrepared(`the instance is ${rec ? `migration state ${rec.migrationState}` : 'gone'}`);
  return { kind: 'start', plan, item };
}

/** Store transition: item and instance migrating, with what a restarted NC needs to re-join. */
export function applyCommit(draft: NcSnapshot, req: CommitRequest, now: number): void {
  const item = mustItem(draft, req.migrationId, req.instanceId);
  item.state = 'migrating';
  item.startedAt = now;
  item.destinationUri = req.destinationUri;
  delete item.abort;
  const rec = draft.instances[req.instanceId];
  if (rec) rec.migrationState = 'migrating';
}

// --- re-join with a re-issued credential ---

/**
 * Store transition: the hypervisor refused to re-join a migrating item without a credential (it
 * never got the migration; the credential died with the last NC process). The item asks for the
 * next generation, superseding every credential issued for it so far; the CC re-issues both sides.
 */
export function applyAwaitCredential(draft: NcSnapshot, migrationId: string, instanceId: string): number {
  const item = mustItem(draft, migrationId, instanceId);
  if (item.state !== 'migrating') return item.credentialGeneration ?? 0;
  if (item.awaitingCredential !== true) {
    item.credentialGeneration = (item.credentialGeneration ?? 0) + 1;
    item.awaitingCredential = true;
  }
  return item.credentialGeneration ?? 0;
}

/** Store transition: the awaited credential arrived; the migration starts with it (a crash before that asks for the next). */
export function applyRejoin(draft: NcSnapshot, migrationId: string, instanceId: string): void {
  delete mustItem(draft, migrationId, instanceId).awaitingCredential;
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
  // Repeats of a replan that already took effect change nothing.
  if (item.state === 'failed' && req.destination === '') return { kind: 'answer', plan };
  if (item.state !== 'queued') return refuse('MigrationNotPrepared', { host, migrationId, instanceId, detail: `the item is ${item.state}` });
  if (req.destination === '') return { kind: 'fail', error: req.error || 'no destination left for this instance' };
  if (req.destination === host) return refuse('MigrationPlanInvalid', { host, migrationId, detail: `item ${instanceId} cannot go to its own source` });
  if (req.destination === item.destination) return { kind: 'answer', plan };
  return { kind: 'move', destination: req.destination };
}

export function applyReplanMove(draft: NcSnapshot, migrationId: string, instanceId: string, destination: string): void {
  const item = mustItem(draft, migrationId, instanceId);
  item.destination = destination;
  item.attempts += 1;
}

/** Store transition: no destination is left for a queued item; it takes the contract's unplaced shape. */
export function applyReplanFail(draft: NcSnapshot, migrationId: string, instanceId: string, error: string, now: number): void {
  endItem(draft, migrationId, instanceId, 'failed', error, now);
  mustItem(draft, migrationId, instanceId).destination = '';
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
  // Cleaning and completed items are committed: the VM runs on the destination and is not undone.
  const end = items.filter((i) => i.state === 'queued' || i.state === 'preparing' || i.state === 'ready').map((i) => i.instanceId);
  // A repeat re-sends the abort (the first may not have reached the hypervisor); the first reason stays.
  const abort = items.filter((i) => i.state === 'migrating').map((i) => i.instanceId);
  const setCancelRequested = req.cancel && !req.instanceId && !plan.cancelRequested;
  if (end.length === 0 && abort.length === 0 && !setCancelRequested) return { kind: 'nothing' };
  const reason = req.reason || (req.cancel ? 'cancelled' : 'rolled back');
  return { kind: 'apply', end, abort, setCancelRequested, reason };
}

/** Store transition: the abort is recorded before the hypervisor is asked, so a restart repeats it. */
export function applyAbortRequest(draft: NcSnapshot, migrationId: string, instanceId: string, reason: string, cancel: boolean): void {
  const item = mustItem(draft, migrationId, instanceId);
  if (item.state === 'migrating' && !item.abort) item.abort = { reason, cancel };
}

// --- endings ---

/**
 * Store transition: the item ends without moving the VM (rolled-back, cancelled, failed); the
 * instance is this node's plain instance again. Marks the plan finished with its last item.
 */
export function endItem(draft: NcSnapshot, migrationId: string, instanceId: string, state: ItemState, error: string, now: number): void {
  const plan = draft.plans[migrationId];
  const item = mustItem(draft, migrationId, instanceId);
  if (isFinal(item.state)) return;
  item.state = state;
  item.error = error;
  item.endedAt = now;
  delete item.abort;
  delete item.awaitingCredential;
  const rec = draft.instances[instanceId];
  if (rec && rec.migrationId === migrationId) {
    rec.migrationState = 'none';
    delete rec.migrationId;
  }
  if (plan && planFinished(plan)) plan.finishedAt = now;
}

export interface CompletedStats {
  readonly elapsedMs: number;
  readonly downtimeMs: number;
  readonly bytesTransferred: number;
  readonly iterations: number;
}

/** Store transition: the VM runs on the destination; what is left here is being removed. */
export function applyCleaning(draft: NcSnapshot, migrationId: string, instanceId: string, stats: CompletedStats | undefined, progress: PlanItem['progress']): void {
  const item = mustItem(draft, migrationId, instanceId);
  if (item.state !== 'migrating') return;
  item.state = 'cleaning';
  delete item.awaitingCredential;
  if (stats) item.stats = { elapsedMs: stats.elapsedMs, downtimeMs: stats.downtimeMs, bytesTransferred: stats.bytesTransferred, iterations: stats.iterations };
  if (progress) item.progress = progress;
  const rec = draft.instances[instanceId];
  if (rec) rec.migrationState = 'cleaning';
}

/** Store transition, one write: the instance record leaves this node and the item completes. */
export function applyCompleted(draft: NcSnapshot, migrationId: string, instanceId: string, now: number): void {
  const plan = draft.plans[migrationId];
  const item = mustItem(draft, migrationId, instanceId);
  if (item.state !== 'cleaning') return;
  item.state = 'completed';
  item.endedAt = now;
  delete item.abort;
  const rec = draft.instances[instanceId];
  // No tombstone: if the instance ever migrates back, a terminated record would destroy it. The plan
  // item is what answers late messages about this migration.
  if (rec && rec.migrationId === migrationId) delete draft.instances[instanceId];
  if (plan && planFinished(plan)) plan.finishedAt = now;
}

/** How the hypervisor's migration ended, and what is on this host afterwards. */
export type MigrationOutcome =
  | { readonly kind: 'completed'; readonly stats: CompletedStats }
  /**
   * `domain`: whether the domain is still defined here after the failure. `needsCredential`: a
   * re-join without a credential, refused because the hypervisor has no such migration and cannot
   * start it without one (nothing changed there), in a node that runs with credentials.
   */
  | { readonly kind: 'failed'; readonly error: string; readonly domain: 'missing' | 'present'; readonly needsCredential?: boolean };

export type OutcomeDecision =
  /** The VM runs on the destination: go to cleaning (stats unknown when only inferred). */
  | { readonly next: 'cleaning'; readonly stats: CompletedStats | undefined; readonly inferred: boolean }
  /** The VM is still here and never left: ask the CC for a re-issued credential (applyAwaitCredential). */
  | { readonly next: 'await-credential' }
  /** The VM is still here: end the item. */
  | { readonly next: 'rolled-back' | 'cancelled'; readonly error: string };

/**
 * A failed migration whose domain is still here was undone (the hypervisor resumes it here before
 * reporting failure). One whose domain is gone from here moved: commit checked that the domain ran
 * here, and the hypervisor removes the source domain only after the destination confirmed, so
 * "failed" then means "its outcome record was lost" (a hypervisor restarted after completing it).
 * A re-join refused for want of a credential never started: unless an abort was asked, the item
 * waits for a re-issued one instead of losing its work.
 */
export function decideOutcome(item: StoredItem, outcome: MigrationOutcome): OutcomeDecision {
  if (outcome.kind === 'completed') return { next: 'cleaning', stats: outcome.stats, inferred: false };
  if (outcome.domain === 'missing') return { next: 'cleaning', stats: undefined, inferred: true };
  if (item.abort) return { next: item.abort.cancel ? 'cancelled' : 'rolled-back', error: item.abort.reason };
  if (outcome.needsCredential === true) return { next: 'await-credential' };
  return { next: 'rolled-back', error: outcome.error };
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

function mustItem(draft: NcSnapshot, migrationId: string, instanceId: string): StoredItem {
  const item = draft.plans[migrationId]?.items.find((i) => i.instanceId === instanceId);
  // Only the mailbox changes plans, so an item read a moment ago is still there.
  if (!item) throw new Error(`plan item ${migrationId}/${instanceId} vanished inside the mailbox`);
  return item;
}
