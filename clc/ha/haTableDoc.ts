/**
 * Renders the host-HA transition table (hostHaTransitions.ts) as the Markdown table that
 * docs/ARCHITECTURE.md shows between its `ha-table` markers; test/clc/ha/haTableDoc.test.ts fails
 * when the two differ, and `node dist/scripts/haTable.js --write` rewrites the docs.
 */
import { HA_STATES, type HaState } from './hostHaState.js';
import { HA_TABLE, type HaRowDoc } from './hostHaTransitions.js';

export const HA_TABLE_BEGIN = '<!-- ha-table:begin (generated from clc/ha/hostHaTransitions.ts: node dist/scripts/haTable.js --write) -->';
export const HA_TABLE_END = '<!-- ha-table:end -->';

function states(from: readonly HaState[]): string {
  if (from.length === HA_STATES.length) return 'any';
  const missing = HA_STATES.filter((s) => !from.includes(s));
  return missing.length <= 3 ? `any but ${missing.join(', ')}` : from.join(', ');
}

const cell = (s: string): string => s.replaceAll('|', '\\|');

/** The Markdown table, one line per row, triggers in table order. */
export function renderHaTable(): string {
  const lines = ['| Trigger | Fed by | From | Guard | To | Effects |', '|---|---|---|---|---|---|'];
  for (const [trigger, t] of Object.entries(HA_TABLE) as [string, { on: string; rows: readonly HaRowDoc[] }][]) {
    t.rows.forEach((r, i) => {
      lines.push(`| ${i === 0 ? `\`${trigger}\`` : ''} | ${i === 0 ? cell(t.on) : ''} | ${states(r.from)} | ${cell(r.guard)} | ${r.to === 'stay' || r.to === 'refused' ? `(${r.to})` : `**${r.to}**`} | ${cell(r.effects)} |`);
    });
  }
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by the rendered table; throws if a marker is missing. */
export function withHaTable(doc: string): string {
  const b = doc.indexOf(HA_TABLE_BEGIN);
  const e = doc.indexOf(HA_TABLE_END);
  // A programming-invariant check of a docs tool: only the test and the script call it, never a daemon.
  if (b < 0 || e < b) throw new Error('docs/ARCHITECTURE.md lacks the ha-table markers');
  return `${doc.slice(0, b + HA_TABLE_BEGIN.length)}\n${renderHaTable()}\n${doc.slice(e)}`;
}
