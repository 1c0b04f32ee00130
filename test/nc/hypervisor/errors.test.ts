import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HypervisorErrors } from '../../../nc/hypervisor/errors.js';
import { REPO } from '../../helpers/spawnDaemon.js';

describe('HypervisorErrors', () => {
  const doc = readFileSync(join(REPO, 'docs', 'simulated-hypervisor.md'), 'utf8');

  it.each(Object.entries(HypervisorErrors.table))('%s is documented with its status', (code, spec) => {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${code}\``));
    expect(row, `docs/simulated-hypervisor.md has no row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.status}`);
  });

  it('renders placeholders from fields', () => {
    const e = HypervisorErrors.make('DomainNotFound', { id: 'i-1', host: '127.0.9.1' });
    expect(e.message).toBe('domain i-1 is not defined on host 127.0.9.1');
    expect(e.status).toBe(404);
  });
});
