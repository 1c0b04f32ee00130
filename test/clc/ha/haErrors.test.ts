/**
 * Host HA's own registry (clc/ha/errors.ts) and its map to the admin API's (clc/api/haErrorMap.ts):
 * the codes never collide, every HA refusal has the fields its admin code's message needs, and an
 * HA refusal reaches the wire as that admin code, status and words.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_CODE_OF_HA, adminErrorFromHa } from '../../../clc/api/haErrorMap.js';
import { ClcErrors } from '../../../clc/core/errors.js';
import type { HaNodeHooks } from '../../../clc/core/nodeHooks.js';
import { HaErrors, type HaErrorCode } from '../../../clc/ha/errors.js';
import { errorCode, harness, query } from '../harness.js';

const placeholders = (template: string): string[] => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string).sort();
const haCodes = Object.keys(HaErrors.table) as HaErrorCode[];

describe('host HA error registry', () => {
  it('shares no code with the admin API, so a code says which registry made it', () => {
    expect(haCodes.filter((c) => ClcErrors.has(c))).toEqual([]);
  });

  it.each(haCodes)('%s carries every field its admin code needs, and maps to it with the same fields', (code) => {
    const admin = ADMIN_CODE_OF_HA[code];
    const needed = placeholders(ClcErrors.table[admin].message);
    expect(placeholders(HaErrors.table[code].message)).toEqual(expect.arrayContaining(needed));
    const fields = Object.fromEntries(needed.map((f) => [f, `<${f}>`]));
    const mapped = adminErrorFromHa(HaErrors.make(code, fields));
    expect(mapped.code).toBe(admin);
    expect(mapped.status).toBe(ClcErrors.table[admin].status);
    expect(mapped.fields).toEqual(fields);
    expect(mapped.message).not.toMatch(/\{\w+\}/);
  });

  it('leaves an error of any other registry as it is', () => {
    const e = ClcErrors.make('PartitionBusy', { partition: 'p1', holder: 'h', detail: 'd' });
    expect(adminErrorFromHa(e)).toBe(e);
  });

  it('an HA refusal of EnableService answers with the admin code and words, and changes nothing', async () => {
    const detail = 'host 127.0.12.11: host HA is fencing it; confirm the fence or wait for it first';
    const hooks: HaNodeHooks = {
      beforeEnable: () => Promise.reject(HaErrors.make('EnableWhileFencing', { action: 'EnableService', detail })),
      afterEnable: () => Promise.resolve(),
      fencedHosts: () => new Set(),
    };
    const h = await harness({ haHooks: hooks });
    const r = await query(h.app, { Action: 'EnableService', Type: 'NODE', Host: '127.0.12.11' });
    expect([r.status, errorCode(r)]).toEqual([409, 'OperationNotPermitted']);
    expect(r.text).toContain(`EnableService is not permitted on ${detail}`);
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });
});
