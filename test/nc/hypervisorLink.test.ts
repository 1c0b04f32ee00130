import { describe, expect, it } from 'vitest';
import { translate } from '../../nc/hypervisorLink.js';
import { HypervisorErrors, type HypervisorErrorCode } from '../../nc/hypervisor/errors.js';
import { NcErrors } from '../../nc/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';

const HOST = '127.0.10.1';
const FIELDS = { uri: 'u', id: 'i-00000001', host: HOST, detail: 'd', migrationId: 'm', state: 's', operation: 'o', need: 'n', free: 'f' };

describe('hypervisor error translation', () => {
  const expected: Partial<Record<HypervisorErrorCode, string>> = {
    HypervisorUnavailable: 'HypervisorUnavailable',
    HypervisorProtocolError: 'HypervisorUnavailable',
    DomainExists: 'InstanceExists',
    InsufficientHostResources: 'InsufficientCapacity',
    VolumeConflict: 'VolumeConflict',
  };
  it.each(Object.keys(HypervisorErrors.table) as HypervisorErrorCode[])('%s leaves as an NcErrors code', (code) => {
    const out = translate(HypervisorErrors.make(code, FIELDS), HOST, 'create') as FerryError;
    expect(NcErrors.has(out.code)).toBe(true);
    expect(out.code).toBe(expected[code] ?? 'HypervisorRefused');
  });

  it('passes foreign errors through untouched (they are bugs, reported as InternalError)', () => {
    const e = new TypeError('x');
    expect(translate(e, HOST, 'list')).toBe(e);
  });
});
