/**
 * Renders the NC's per-item migration transition tables (migrationSourceTable.ts,
 * migrationDestinationTable.ts) as the Markdown tables docs/ARCHITECTURE.md shows between its
 * `nc-migration-table` markers; test/nc/migrationTableDoc.test.ts fails when the two differ, and
 * `node dist/scripts/migrationTable.js --write` rewrites the docs. (The same layout as
 * clc/ha/haTableDoc.ts; each tier renders its own tables.)
 */
import { INCOMING_STATES, INCOMING_TABLE } from './migrationDestinationTable.js';
import { ITEM_STATES, SOURCE_TABLE } from './migrationSourceTable.js';
import type { RowDoc, TriggerRows } from './transitionTable.js';

export const NC_TABLE_BEGIN = '<!-- nc-migration-table:begin (generated from nc/migrationSourceTable.ts and nc/migrationDestinationTable.ts: node dist/scripts/migrationTable.js --write) -->';
export const NC_TABLE_END = '<!-- nc-migration-table:end -->';

type TableDoc = Record<string, TriggerRows<RowDoc<string, string>>>;

function states(from: readonly string[], all: readonly string[]): string {
  if (from.length === all.length) return 'any';
  const missing = all.filter((s) => !from.includes(s));
  return missing.length <= 2 && from.length > 2 ? `any but ${missing.join(', ')}` : from.join(', ');
}

const cell = (s: string): string => s.replaceAll('|', '\\|');

function renderTable(table: TableDoc, all: readonly string[]): string {
  const lines = ['| Trigger | Fed by | From | Guard | To | Effects |', '|---|---|---|---|---|---|'];
  for (const [trigger, t] of Object.entries(table)) {
    t.rows.forEach((r, i) => {
      const to = r.to === 'stay' || r.to === 'refused' || r.to === 'given' ? `(${r.to})` : `**${r.to}**`;
      lines.push(`| ${i === 0 ? `\`${trigger}\`` : ''} | ${i === 0 ? cell(t.on) : ''} | ${states(r.from, all)} | ${cell(r.guard)} | ${to} | ${cell(r.effects)} |`);
    });
  }
  return lines.join('\n');
}

/** Both tables, source first, as Markdown. */
export function renderNcMigrationTables(): string {
  return [
    'Source NC, per plan item (`nc/migrationSourceTable.ts`):', '', renderTable(SOURCE_TABLE, ITEM_STATES), '',
    'Destination NC, per Incoming record (`nc/migrationDestinationTable.ts`):', '', renderTable(INCOMING_TABLE, INCOMING_STATES),
  ].join('\n');
}

/** `doc` with the text between the markers replaced by the rendered tables; throws if a marker is missing. */
export function withNcMigrationTables(doc: string): string {
  const b = doc.indexOf(NC_TABLE_BEGIN);
  const e = doc.indexOf(NC_TABLE_END);
  // A programming-invariant check of a docs tool: only the test and the script call it, never a daemon.
  if (b < 0 || e < b) throw new Error('docs/ARCHITECTURE.md lacks the nc-migration-table markers');
  return `${doc.slice(0, b + NC_TABLE_BEGIN.length)}\n${renderNcMigrationTables()}\n${doc.slice(e)}`;
}
