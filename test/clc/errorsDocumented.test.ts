/** docs/API.md documents every code of the admin API's registry, with the registry's status and flags. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClcErrors } from '../../clc/core/errors.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'API.md'), 'utf8');

/** Rows of the "Error codes" table: | `Code` | status | client/server | yes/no | when |. */
function documentedRows(): Map<string, { status: number; fault: string; retry: string }> {
  const section = doc.split(/^## Error codes$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, { status: number; fault: string; retry: string }>();
  for (const m of section.matchAll(/^\| `([^`]+)` \| (\d{3}) \| (client|server) \| (yes|no) \|/gm)) {
    rows.set(m[1] as string, { status: Number(m[2]), fault: m[3] as string, retry: m[4] as string });
  }
  return rows;
}

describe('docs/API.md', () => {
  const rows = documentedRows();

  it.each(Object.entries(ClcErrors.table))('documents %s with its status, fault and retry', (code, spec) => {
    expect(rows.get(code), `${code} is missing from the error table of docs/API.md`).toEqual({
      status: spec.status, fault: spec.clientFault ? 'client' : 'server', retry: spec.retryable ? 'yes' : 'no',
    });
  });

  it('documents no code the registry does not have', () => {
    expect([...rows.keys()].filter((c) => !ClcErrors.has(c))).toEqual([]);
  });

  it('documents every action', async () => {
    const { ACTIONS } = await import('../../clc/api/actions/index.js');
    for (const action of Object.keys(ACTIONS)) expect(doc, action).toMatch(new RegExp(`^### .*\\b${action}\\b`, 'm'));
  });
});
