import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INCOMING_STATES, INCOMING_TABLE } from '../../nc/migrationDestinationTable.js';
import { withNcMigrationTables } from '../../nc/migrationTableDoc.js';
import { ITEM_STATES, SOURCE_TABLE } from '../../nc/migrationSourceTable.js';

describe('docs/ARCHITECTURE.md NC migration transition tables', () => {
  it('are the tables in nc/migrationSourceTable.ts and nc/migrationDestinationTable.ts (rewrite with node dist/scripts/migrationTable.js --write)', () => {
    const doc = readFileSync(new URL('../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
    expect(doc).toBe(withNcMigrationTables(doc));
  });
});

describe('the tables themselves', () => {
  const tables = [['source', SOURCE_TABLE, ITEM_STATES], ['destination', INCOMING_TABLE, INCOMING_STATES]] as const;
  it.each(tables)('%s: every row names known states, and a refused row a code', (_n, table, states) => {
    for (const t of Object.values(table)) {
      for (const r of t.rows as readonly { from: readonly string[]; to: string; refusal?: unknown }[]) {
        expect(r.from.length).toBeGreaterThan(0);
        for (const s of r.from) expect(states).toContain(s);
        if (r.to === 'refused') expect(r.refusal).toBeDefined();
      }
    }
  });

  it('source: a committed item (cleaning, completed) is never rolled back', () => {
    for (const r of SOURCE_TABLE.rollback.rows) {
      if (r.from.includes('cleaning') || r.from.includes('completed')) expect(r.to).toBe('stay');
    }
  });
});
