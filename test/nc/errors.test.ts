import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NcErrors } from '../../nc/errors.js';
import { NC_ERROR_CODES } from '../../shared/protocol/ncProtocol.js';

const README = readFileSync(resolve(import.meta.dirname, '..', '..', 'nc', 'README.md'), 'utf8');

describe('NC error registry', () => {
  it.each(Object.entries(NcErrors.table))('%s is documented in nc/README.md with its status', (code, spec) => {
    expect(README).toMatch(new RegExp(`\\| ${code} \\| ${spec.status} \\|`));
  });

  it('holds every code the protocol tells callers to act on', () => {
    for (const code of NC_ERROR_CODES) expect(NcErrors.has(code)).toBe(true);
  });
});
