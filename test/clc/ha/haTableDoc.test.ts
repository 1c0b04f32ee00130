import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withHaTable } from '../../../clc/ha/haTableDoc.js';

describe('docs/ARCHITECTURE.md host-HA transition table', () => {
  it('is the table in clc/ha/hostHaTransitions.ts (rewrite it with node dist/scripts/haTable.js --write)', () => {
    const doc = readFileSync(new URL('../../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
    expect(doc).toBe(withHaTable(doc));
  });
});
