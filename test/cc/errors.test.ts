import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CcErrors } from '../../cc/errors.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'cc', 'README.md'), 'utf8');

describe('CC error registry', () => {
  it.each(Object.entries(CcErrors.table))('%s is documented with its HTTP status', (code, spec) => {
    expect(readme).toMatch(new RegExp(`\\| \`${code}\` \\| ${spec.status} \\|`));
  });

  it('documents no code the registry lacks', () => {
    const documented = [...readme.matchAll(/^\| `(\w+)` \| \d{3} \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(CcErrors.table).sort());
  });
});
