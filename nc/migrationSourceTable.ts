/**
 * The source NC's per-item migration transition table (issue 17, STYLE habit 2; the shape of
 * clc/ha/hostHaTransitions.ts): every move of a plan item on its source, read top to bottom. A
 * trigger's rows are tried in order; the first whose state is in `from` and whose guard holds is
 * the one. `to` is the next item state, `given` (the final state endItem names), `stay` (the record may change, the state does not) or
 * `refused` (a coded refusal that changes nothing). `decides` tells the item executor what to do
 * beyond the store (answer, start the hypervisor's migration, abort it...); `run` is the store
 * change as a pure function of the item: the next item and the instance record's change, as data.
 * migrationSource.ts's decide functions select rows, its apply functions run them on a draft.
 * docs/ARCHITECTURE.md's table is rendered from this one (migrationTableDoc.ts); a test fails when
 * they differ.
 */
import type { ItemState, PlanItem } from '../shared/protocol/migrationProtocol.js';
import { FINAL_ITEM_STATES, itemStateSchema } from '../shared/protocol/migrationProtocol.js';
import type { NcErrorCode } from './errors.js';
import type { MigrationStats } from './hypervisor/driver.js';
import type { StoredItem } from './ncStore.js';
import type { TableRow, TriggerRows } from './transitionTable.js';

export const ITEM_STATES: readonly ItemState[] = itemStateSchema.options;

/** What happens to the item's instance record on this node. */
export type InstanceEffect =
  /** Set its migrationState (`ready` also names the plan). */
  | { readonly kind: 'migrationState'; readonly state: 'ready' | 'migrating' | 'cleaning' }
  /** It is this node's plain instance again (migrationState none), if this plan held it. */
  | { readonly kind: 'release' }
  /** The VM runs on the destination: the record leaves this node, if this plan held it. */
  | { readonly kind: 'remove' };

export interface ItemStep {
  readonly next: StoredItem;
  readonly instance?: InstanceEffect;
}

/** The hypervisor's statistics of a completed migration, without its ids. */
export type CompletedStats = Omit<MigrationStats, 'migrationId' | 'id'>;

/** How the hypervisor's migration ended, and what is on this host afterwards. */
export type MigrationOutcome =
  | { readonly kind: 'completed'; readonly stats: CompletedStats }
  /**
   * `domain`: whether the domain is still defined here after the failure. `needsCredential`: a
   * re-join without a credential, refused because the hypervisor has no such migration and cannot
   * start it without one (nothing changed there), in a node that runs with credentials.
   */
  | { readonly kind: 'failed'; readonly error: string; readonly domain: 'missing' | 'present'; readonly needsCredential?: boolean };

/** What each trigger carries. */
export interface SourcePayloads {
  prepared: Record<string, never>;
  commit: {
    readonly destinationUri: string; readonly now: number; readonly instanceReady: boolean;
    /** The instance as a refusal names it: `migration state <s>`, or `gone`. */
    readonly instance: string;
    /** The request carries a credential of the generation the item awaits. */
    readonly awaitedCredential: boolean;
  };
  replan: { readonly host: string; readonly destination: string; readonly error: string; readonly now: number };
  rollback: { readonly reason: string; readonly cancel: boolean; readonly now: number };
  timeout: { readonly reason: string };
  outcome: { readonly outcome: MigrationOutcome; readonly progress: PlanItem['progress']; readonly now: number };
  /** End an item with `state` (the one place an item ends without a row of its own). */
  end: { readonly state: ItemState; readonly error: string; readonly now: number };
  cleaned: { readonly now: number };
}
export type SourceTrigger = keyof SourcePayloads;

/** What the executor does for each trigger's row, beyond the store change. */
export interface SourceDecisions {
  prepared: 'ready' | 'recorded';
  commit: 'rejoin' | 'answer' | 'start' | 'refuse';
  replan: 'answer' | 'fail' | 'move' | 'refuse' | 'invalid';
  rollback: 'end' | 'abort' | 'nothing';
  timeout: 'abort';
  outcome: 'cleaning' | 'await-credential' | 'rolled-back' | 'cancelled' | 'settled';
  end: 'end';
  cleaned: 'completed';
}

/**
 * A source row (transitionTable.ts); `to` may also be `given`: the final state endItem names.
 * Refused rows carry the code (NcErrors) and the detail it names.
 */
export type ItemRow<P, D> = TableRow<ItemState, ItemState | 'given', StoredItem, P, D, ItemStep> & {
  readonly refusal?: { readonly code: NcErrorCode; readonly detail: (item: StoredItem, p: P) => string };
};

export type SourceTable = { readonly [K in SourceTrigger]: TriggerRows<ItemRow<SourcePayloads[K], SourceDecisions[K]>> };

const FINAL = FINAL_ITEM_STATES;
const but = (...excluded: ItemState[]): ItemState[] => ITEM_STATES.filter((s) => !excluded.includes(s));
const UNCOMMITTED: ItemState[] = ['queued', 'preparing', 'ready'];

/** The item without the named optional fields. */
function without(item: StoredItem, ...keys: ('abort' | 'awaitingCredential')[]): StoredItem {
  const next = { ...item };
  for (const k of keys) delete next[k];
  return next;
}

/** The item ends here (the VM stays on this node): its instance is released. */
function ending(item: StoredItem, state: ItemState, error: string, now: number): ItemStep {
  return { next: { ...without(item, 'abort', 'awaitingCredential'), state, error, endedAt: now }, instance: { kind: 'release' } };
}

/** The abort is recorded before the hypervisor is asked, so a restart repeats it; the first reason stays. */
const recordAbort = (cancel: (p: { readonly cancel?: boolean }) => boolean) => (item: StoredItem, p: { readonly reason: string; readonly cancel?: boolean }): ItemStep =>
  ({ next: item.abort ? item : { ...item, abort: { reason: p.reason, cancel: cancel(p) } } });

function cleaning(item: StoredItem, stats: CompletedStats | undefined, progress: PlanItem['progress']): ItemStep {
  const next: StoredItem = { ...without(item, 'awaitingCredential'), state: 'cleaning' };
  if (stats) next.stats = { elapsedMs: stats.elapsedMs, downtimeMs: stats.downtimeMs, bytesTransferred: stats.bytesTransferred, iterations: stats.iterations };
  if (progress) next.progress = progress;
  return { next, instance: { kind: 'migrationState', state: 'cleaning' } };
}

type OutcomeP = SourcePayloads['outcome'];
const failed = (p: OutcomeP): Extract<MigrationOutcome, { kind: 'failed' }> | undefined => (p.outcome.kind === 'failed' ? p.outcome : undefined);

export const SOURCE_TABLE: SourceTable = {
  prepared: {
    on: 'prepare(source) accepted (decideSourcePrepare): each item of the plan, in one write',
    rows: [
      { from: ['queued'], guard: '', to: 'stay', decides: 'ready', effects: 'instance `ready` in this plan', run: (i) => ({ next: i, instance: { kind: 'migrationState', state: 'ready' } }) },
      { from: ['failed'], guard: '', to: 'stay', decides: 'recorded', effects: 'none: unplaced by the CC, recorded, never prepared' },
    ],
  },
  commit: {
    on: 'commit(source), after the plan, item and destination are found',
    rows: [
      {
        from: ['migrating'], guard: 'awaiting a credential, no abort, the request carries one of the awaited generation', to: 'stay', decides: 'rejoin',
        effects: 'awaitingCredential cleared (persisted first); `migrateOut` with the credential',
        when: (i, p) => i.awaitingCredential === true && !i.abort && p.awaitedCredential, run: (i) => ({ next: without(i, 'awaitingCredential') }),
      },
      { from: ['migrating', 'cleaning', 'completed'], guard: '', to: 'stay', decides: 'answer', effects: 'none: a repeat, answered with the plan' },
      {
        from: ['queued'], guard: 'instance `ready`', to: 'migrating', decides: 'start',
        effects: 'startedAt, destinationUri; instance `migrating`; `migrateOut` (once `info` shows the domain running)', when: (_i, p) => p.instanceReady,
        run: (i, p) => ({ next: { ...without(i, 'abort'), state: 'migrating', startedAt: p.now, destinationUri: p.destinationUri }, instance: { kind: 'migrationState', state: 'migrating' } }),
      },
      {
        from: ['queued'], guard: 'instance not `ready`', to: 'refused', decides: 'refuse', effects: 'MigrationNotPrepared',
        refusal: { code: 'MigrationNotPrepared', detail: (_i, p) => `the instance is ${p.instance}` },
      },
      {
        from: but('queued', 'migrating', 'cleaning', 'completed'), guard: '', to: 'refused', decides: 'refuse', effects: 'MigrationNotPrepared',
        refusal: { code: 'MigrationNotPrepared', detail: (i) => `the item is ${i.state}` },
      },
    ],
  },
  replan: {
    on: 'replan(source), after the plan and item are found',
    rows: [
      { from: ['failed'], guard: 'no destination (a repeat)', to: 'stay', decides: 'answer', effects: 'none', when: (_i, p) => p.destination === '' },
      {
        from: but('queued'), guard: '', to: 'refused', decides: 'refuse', effects: 'MigrationNotPrepared',
        refusal: { code: 'MigrationNotPrepared', detail: (i) => `the item is ${i.state}` },
      },
      {
        from: ['queued'], guard: 'no destination', to: 'failed', decides: 'fail', effects: 'destination cleared, error; instance released', when: (_i, p) => p.destination === '',
        run: (i, p) => { const s = ending(i, 'failed', p.error || 'no destination left for this instance', p.now); return { ...s, next: { ...s.next, destination: '' } }; },
      },
      {
        from: ['queued'], guard: 'to its own source', to: 'refused', decides: 'invalid', effects: 'MigrationPlanInvalid', when: (_i, p) => p.destination === p.host,
        refusal: { code: 'MigrationPlanInvalid', detail: (i) => `item ${i.instanceId} cannot go to its own source` },
      },
      { from: ['queued'], guard: 'the same destination (a repeat)', to: 'stay', decides: 'answer', effects: 'none', when: (i, p) => p.destination === i.destination },
      { from: ['queued'], guard: 'another destination', to: 'stay', decides: 'move', effects: 'destination replaced, attempts + 1', run: (i, p) => ({ next: { ...i, destination: p.destination, attempts: i.attempts + 1 } }) },
    ],
  },
  rollback: {
    on: 'rollback(source) of the item or its whole plan',
    rows: [
      { from: UNCOMMITTED, guard: 'cancel', to: 'cancelled', decides: 'end', effects: 'error = reason; instance released', when: (_i, p) => p.cancel, run: (i, p) => ending(i, 'cancelled', p.reason, p.now) },
      { from: UNCOMMITTED, guard: 'not cancel', to: 'rolled-back', decides: 'end', effects: 'error = reason; instance released', run: (i, p) => ending(i, 'rolled-back', p.reason, p.now) },
      { from: ['migrating'], guard: '', to: 'stay', decides: 'abort', effects: 'abort recorded (the first reason stays), then `abortMigration`; the outcome ends it', run: recordAbort((p) => p.cancel === true) },
      // Cleaning and completed items are committed: the VM runs on the destination and is not undone.
      { from: ['cleaning', ...FINAL], guard: '', to: 'stay', decides: 'nothing', effects: 'none: committed or ended' },
    ],
  },
  timeout: {
    on: 'tick: the migrating allowance (base + per-GiB × memory, from the commit) or the stall limit passed (timeoutReason)',
    rows: [{ from: ['migrating'], guard: 'no abort recorded', to: 'stay', decides: 'abort', effects: 'abort recorded, then `abortMigration`', when: (i) => !i.abort, run: recordAbort(() => false) }],
  },
  outcome: {
    on: '`migrateOut` came back (or a re-join was refused); a failure is judged with `info` of the domain here',
    rows: [
      { from: ['migrating'], guard: 'completed', to: 'cleaning', decides: 'cleaning', effects: 'stats, progress; instance `cleaning`; then `cleaned`', when: (_i, p) => p.outcome.kind === 'completed', run: (i, p) => cleaning(i, p.outcome.kind === 'completed' ? p.outcome.stats : undefined, p.progress) },
      // The hypervisor removes the source domain only after the destination confirmed: "failed" with no domain here means its outcome record was lost.
      { from: ['migrating'], guard: 'failed, the domain is gone from here (it moved)', to: 'cleaning', decides: 'cleaning', effects: 'stats unknown; instance `cleaning`; then `cleaned`', when: (_i, p) => failed(p)?.domain === 'missing', run: (i, p) => cleaning(i, undefined, p.progress) },
      { from: ['migrating'], guard: 'failed, an abort with cancel recorded', to: 'cancelled', decides: 'cancelled', effects: 'error = abort reason; instance released', when: (i) => i.abort?.cancel === true, run: (i, p) => ending(i, 'cancelled', i.abort?.reason ?? '', p.now) },
      { from: ['migrating'], guard: 'failed, an abort recorded', to: 'rolled-back', decides: 'rolled-back', effects: 'error = abort reason; instance released', when: (i) => i.abort !== undefined, run: (i, p) => ending(i, 'rolled-back', i.abort?.reason ?? '', p.now) },
      {
        from: ['migrating'], guard: 'failed, a re-join refused for want of the credential the last process lost', to: 'stay', decides: 'await-credential',
        effects: 'credentialGeneration + 1 and awaitingCredential (once); the CC re-issues both sides', when: (_i, p) => failed(p)?.needsCredential === true,
        run: (i) => ({ next: i.awaitingCredential === true ? i : { ...i, credentialGeneration: (i.credentialGeneration ?? 0) + 1, awaitingCredential: true } }),
      },
      { from: ['migrating'], guard: 'failed', to: 'rolled-back', decides: 'rolled-back', effects: 'error; instance released (the hypervisor resumed the VM here)', run: (i, p) => ending(i, 'rolled-back', failed(p)?.error ?? '', p.now) },
      { from: but('migrating'), guard: '', to: 'stay', decides: 'settled', effects: 'none: already settled (a rollback waited for it)' },
    ],
  },
  end: {
    on: 'an item ended without moving the VM (endItem)',
    rows: [
      { from: but(...FINAL), guard: '', to: 'given', decides: 'end', effects: 'error, endedAt; instance released', run: (i, p) => ending(i, p.state, p.error, p.now) },
      { from: FINAL, guard: '', to: 'stay', decides: 'end', effects: 'none: already final' },
    ],
  },
  cleaned: {
    on: 'the stale definition left here is removed (or none is left)',
    rows: [
      {
        from: ['cleaning'], guard: '', to: 'completed', decides: 'completed', effects: 'endedAt; the instance record leaves this node (no tombstone)',
        run: (i, p) => ({ next: { ...without(i, 'abort'), state: 'completed', endedAt: p.now }, instance: { kind: 'remove' } }),
      },
    ],
  },
};

/** The row a trigger selects for `item`, or null (the trigger changes nothing). */
export function selectSourceRow<K extends SourceTrigger>(trigger: K, item: StoredItem, p: SourcePayloads[K]): ItemRow<SourcePayloads[K], SourceDecisions[K]> | null {
  const rows: readonly ItemRow<SourcePayloads[K], SourceDecisions[K]>[] = SOURCE_TABLE[trigger].rows;
  return rows.find((r) => r.from.includes(item.state) && (r.when?.(item, p) ?? true)) ?? null;
}
