/**
 * The destination NC's per-item migration transition table (issue 17; the shape of
 * migrationSourceTable.ts): the Incoming record of one instance, from prepare until it is rolled
 * back or becomes this node's instance. `absent`: no Incoming record (there may be an instance
 * record); `instance`: the record became this node's running instance. A rollback under way is the
 * record's `rollingBack` flag, a guard rather than a state (the record keeps preparing or ready).
 * The state stays ready during the transfer: no driver call or event tells a destination that the
 * stream has begun (see nc/README.md, open points). migrationDestination.ts's decide functions
 * select rows, its apply functions run them on a draft; docs/ARCHITECTURE.md's table is rendered
 * from this one (migrationTableDoc.ts).
 */
import type { NcErrorCode } from './errors.js';
import type { StoredIncoming } from './ncStore.js';
import type { TableRow, TriggerRows } from './transitionTable.js';

export type IncomingState = 'absent' | 'preparing' | 'ready';
export const INCOMING_STATES: readonly IncomingState[] = ['absent', 'preparing', 'ready'];

/** What each trigger carries: the facts its guards look at, found by the caller. */
export interface IncomingPayloads {
  prepare: {
    /** The Incoming record held (absent: none) was made by this request's migration, with its spec. */
    readonly sameMigration: boolean;
    readonly sameSpec: boolean;
    /** The request's credential is of a later generation than the record holds. */
    readonly laterGeneration: boolean;
    /** With no Incoming record: an instance record of this id, and whether this migration brought it. */
    readonly instanceHere: boolean;
    readonly arrivedByThis: boolean;
    readonly disabled: boolean;
    /** An administrator quarantined the node (quarantine.ts): it takes nothing, even when the plan named it. */
    readonly quarantined: boolean;
    readonly connected: boolean;
    readonly fits: boolean;
    /** The record a fresh prepare persists. */
    readonly fresh: StoredIncoming;
  };
  prepared: { readonly now: number; readonly generation: number | undefined };
  prepareRefused: { readonly acknowledged: boolean };
  rollback: Record<string, never>;
  rolledBack: Record<string, never>;
  arrived: Record<string, never>;
}
export type IncomingTrigger = keyof IncomingPayloads;

export interface IncomingDecisions {
  prepare: 'arrived' | 'refuse' | 'prepare-fresh' | 'prepare' | 'rejoin' | 'answer';
  prepared: 'ready';
  prepareRefused: 'drop' | 'keep';
  rollback: 'abort';
  rolledBack: 'removed';
  arrived: 'instance';
}

/** A destination row (transitionTable.ts): the record afterwards (undefined: none) is its run's result. */
export type IncomingRow<P, D> = TableRow<IncomingState, IncomingState | 'instance', StoredIncoming | undefined, P, D, StoredIncoming | undefined> & {
  readonly refusal?: NcErrorCode;
};

export type IncomingTable = { readonly [K in IncomingTrigger]: TriggerRows<IncomingRow<IncomingPayloads[K], IncomingDecisions[K]>> };

const HELD: IncomingState[] = ['preparing', 'ready'];
type PrepareP = IncomingPayloads['prepare'];
const refused = (guard: string, code: NcErrorCode, when: (rec: StoredIncoming | undefined, p: PrepareP) => boolean, from: IncomingState[] = ['absent']): IncomingRow<PrepareP, 'refuse'> =>
  ({ from, guard, to: 'refused', decides: 'refuse', effects: code, refusal: code, when });

export const INCOMING_TABLE: IncomingTable = {
  prepare: {
    on: 'prepare(destination) of a valid request: idempotency first (a repeat is answered even on a disabled or full node), then state, health, capacity',
    rows: [
      refused('another migration holds the instance', 'MigrationInProgress', (_r, p) => !p.sameMigration, HELD),
      refused('same ids, another spec', 'InstanceExists', (_r, p) => !p.sameSpec, HELD),
      { from: ['preparing'], guard: '', to: 'stay', decides: 'prepare', effects: '`prepareIncoming` again (an earlier attempt was never confirmed)' },
      { from: ['ready'], guard: 'rolling back', to: 'stay', decides: 'prepare', effects: '`prepareIncoming` again', when: (r) => r?.rollingBack === true },
      { from: ['ready'], guard: 'a later credential generation (a source re-joins)', to: 'stay', decides: 'rejoin', effects: '`prepareIncoming` with it; a refusal keeps the record', when: (_r, p) => p.laterGeneration },
      { from: ['ready'], guard: '', to: 'stay', decides: 'answer', effects: 'none: a repeat, answered with the record' },
      { from: ['absent'], guard: 'this migration already brought the VM here', to: 'stay', decides: 'arrived', effects: 'none: answered without a record', when: (_r, p) => p.arrivedByThis },
      refused('an instance of that id is here', 'InstanceExists', (_r, p) => p.instanceHere),
      refused('the node is quarantined (named by the plan or not)', 'NodeQuarantined', (_r, p) => p.quarantined),
      refused('the node is disabled and the plan did not name it', 'NodeDisabled', (_r, p) => p.disabled),
      refused('the hypervisor is not connected', 'HypervisorUnavailable', (_r, p) => !p.connected),
      refused('it does not fit (instances and Incoming records are counted)', 'InsufficientCapacity', (_r, p) => !p.fits),
      { from: ['absent'], guard: '', to: 'preparing', decides: 'prepare-fresh', effects: 'record persisted first, then `prepareIncoming`', run: (_r, p) => p.fresh },
    ],
  },
  prepared: {
    on: '`prepareIncoming` succeeded',
    rows: [
      { from: ['preparing'], guard: '', to: 'ready', decides: 'ready', effects: 'since = now; rollingBack cleared; the held credential\'s generation', run: (r, p) => r && readied({ ...r, state: 'ready', since: p.now }, p.generation) },
      { from: ['ready'], guard: '', to: 'stay', decides: 'ready', effects: 'rollingBack cleared; the held credential\'s generation', run: (r, p) => r && readied({ ...r }, p.generation) },
    ],
  },
  prepareRefused: {
    on: '`prepareIncoming` refused with a code (nothing was prepared; no answer at all keeps the record for a retry)',
    rows: [
      { from: HELD, guard: 'never acknowledged ready to the CC', to: 'absent', decides: 'drop', effects: 'record removed', when: (_r, p) => !p.acknowledged, run: () => undefined },
      { from: HELD, guard: 'acknowledged (a re-join\'s re-prepare)', to: 'stay', decides: 'keep', effects: 'none: the next look finalizes a VM that arrived' },
    ],
  },
  rollback: {
    on: 'rollback(destination) of the item or its whole migration',
    rows: [{ from: HELD, guard: '', to: 'stay', decides: 'abort', effects: 'rollingBack persisted first; `abortIncoming`; then `arrived` or `rolledBack`', run: (r) => r && { ...r, rollingBack: true } }],
  },
  rolledBack: {
    on: 'after `abortIncoming` the domain has not arrived; or a restart lost the credential of a record never acknowledged ready',
    rows: [{ from: HELD, guard: '', to: 'absent', decides: 'removed', effects: 'record removed, credential forgotten', run: () => undefined }],
  },
  arrived: {
    on: 'the domain runs (or stopped after running) here: event `migration-incoming-done`, a tick, recovery, or a late rollback',
    rows: [{ from: HELD, guard: '', to: 'instance', decides: 'instance', effects: 'the record becomes a running instance record with the same identity (arrivedBy), ONE write' }],
  },
};

function readied(r: StoredIncoming, generation: number | undefined): StoredIncoming {
  delete r.rollingBack;
  if (generation !== undefined && generation > 0) r.credentialGeneration = generation;
  return r;
}

/** Only `preparing` is stored besides `ready` (the contract's type is wider). */
export function incomingState(rec: StoredIncoming | undefined): IncomingState {
  if (!rec) return 'absent';
  return rec.state === 'preparing' ? 'preparing' : 'ready';
}

/** The row a trigger selects for the record (undefined: none), or null (the trigger changes nothing). */
export function selectIncomingRow<K extends IncomingTrigger>(trigger: K, rec: StoredIncoming | undefined, p: IncomingPayloads[K]): IncomingRow<IncomingPayloads[K], IncomingDecisions[K]> | null {
  const rows: readonly IncomingRow<IncomingPayloads[K], IncomingDecisions[K]>[] = INCOMING_TABLE[trigger].rows;
  const state = incomingState(rec);
  return rows.find((r) => r.from.includes(state) && (r.when?.(rec, p) ?? true)) ?? null;
}
