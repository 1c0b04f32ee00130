/**
 * The shape both NC migration tables share (migrationSourceTable.ts, migrationDestinationTable.ts;
 * after clc/ha/hostHaTransitions.ts): per trigger, rows tried in order; the first whose state is in
 * `from` and whose guard holds is the one.
 */

/** A row as the docs show it (migrationTableDoc.ts renders these). */
export interface RowDoc<S extends string, To extends string> {
  readonly from: readonly S[];
  /** The condition, in words; empty when the state is enough. */
  readonly guard: string;
  /** The next state; `stay`: the record may change, the state does not; `refused`: a coded refusal. */
  readonly to: To | 'stay' | 'refused';
  /** What the move does besides changing state, in words. */
  readonly effects: string;
}

/** `R`: the record the row looks at; `P`: the trigger's payload; `D`: what the row decides; `Out`: its run's result. */
export interface TableRow<S extends string, To extends string, R, P, D, Out> extends RowDoc<S, To> {
  readonly when?: (rec: R, p: P) => boolean;
  /** What the executor does beyond the store. */
  readonly decides: D;
  /** The store change as a pure function; absent: the row changes nothing. */
  readonly run?: (rec: R, p: P) => Out;
}

export interface TriggerRows<Row> {
  /** Which request, outcome or check feeds the trigger. */
  readonly on: string;
  readonly rows: readonly Row[];
}
