import { describe, expect, it } from 'vitest';
import { HypervisorErrors } from '../../../../nc/hypervisor/errors.js';
import { translateLibvirtError, VIR_ERR } from '../../../../nc/hypervisor/libvirt/errorMap.js';
import { LibvirtCallError } from '../../../../nc/hypervisor/libvirt/libvirtApi.js';

const base = { uri: 'qemu+tcp://127.0.0.1:16511/system', host: '127.0.0.1', operation: 'start', id: 'i-1' };
const lv = (code: number, message = 'boom'): LibvirtCallError => new LibvirtCallError('virDomainCreate', { code, domain: 10, message });

describe('translateLibvirtError', () => {
  it.each([
    [VIR_ERR.NO_DOMAIN, 'DomainNotFound'],
    [VIR_ERR.OPERATION_INVALID, 'DomainStateConflict'],
    [VIR_ERR.DOM_EXIST, 'DomainExists'],
    [VIR_ERR.SYSTEM_ERROR, 'HypervisorUnavailable'],
    [VIR_ERR.RPC, 'HypervisorUnavailable'],
    [VIR_ERR.NO_CONNECT, 'HypervisorUnavailable'],
    [VIR_ERR.AUTH_FAILED, 'HypervisorUnavailable'],
    [VIR_ERR.XML_ERROR, 'HypervisorBadRequest'],
    [VIR_ERR.CONFIG_UNSUPPORTED, 'HypervisorBadRequest'],
    [VIR_ERR.INTERNAL_ERROR, 'HypervisorInternalError'],
    [VIR_ERR.OPERATION_FAILED, 'HypervisorInternalError'],
  ])('outside a migration, libvirt error %i is %s', (code, want) => {
    expect(translateLibvirtError(lv(code), base).code).toBe(want);
  });

  it.each([
    [VIR_ERR.OPERATION_ABORTED, 'MigrationAborted'],
    [VIR_ERR.OPERATION_FAILED, 'MigrationFailed'],
    [VIR_ERR.SYSTEM_ERROR, 'MigrationFailed'],
    [VIR_ERR.RPC, 'MigrationFailed'],
    [VIR_ERR.NO_DOMAIN, 'DomainNotFound'],
    [VIR_ERR.OPERATION_INVALID, 'DomainStateConflict'],
  ])('in a migration, libvirt error %i is %s', (code, want) => {
    expect(translateLibvirtError(lv(code), { ...base, operation: 'migrate', migrationId: 'm-1' }).code).toBe(want);
  });

  it('keeps libvirt\'s message and code in the detail', () => {
    const e = translateLibvirtError(lv(VIR_ERR.OPERATION_FAILED, "The certificate hasn't got a known issuer"), { ...base, migrationId: 'm-1' });
    expect(e.message).toContain('known issuer');
    expect(e.message).toContain('libvirt error 9');
    expect(e.fields).toMatchObject({ migrationId: 'm-1', id: 'i-1' });
  });

  it('passes coded errors through and codes anything else as internal', () => {
    const coded = HypervisorErrors.make('MigrationAborted', { migrationId: 'm', id: 'i' });
    expect(translateLibvirtError(coded, base)).toBe(coded);
    expect(translateLibvirtError(new TypeError('koffi says no'), base).code).toBe('HypervisorInternalError');
    expect(translateLibvirtError('weird', base).code).toBe('HypervisorInternalError');
    expect(translateLibvirtError(new LibvirtCallError('virConnectOpen', undefined), base).code).toBe('HypervisorInternalError');
  });
});
