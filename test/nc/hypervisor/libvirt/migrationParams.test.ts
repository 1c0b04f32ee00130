import { describe, expect, it } from 'vitest';
import { VIR } from '../../../../nc/hypervisor/libvirt/ffi.js';
import { domainTypeFor } from '../../../../nc/hypervisor/libvirt/kvmProbe.js';
import { migrationFlags, migrationParams, migrationUriFor } from '../../../../nc/hypervisor/libvirt/migrationParams.js';

describe('migration parameters', () => {
  it.each([
    ['qemu+tcp://127.0.0.1:16512/system', 'tcp://127.0.0.1'],
    ['qemu+tls://127.0.1.2/system', 'tcp://127.0.1.2'],
    ['qemu+ssh://root@127.0.0.3/system', 'tcp://127.0.0.3'],
    ['qemu:///system', 'tcp://127.0.0.1'],
    ['not a uri', 'tcp://127.0.0.1'],
  ])('the QEMU stream for %s goes to %s', (dest, want) => {
    expect(migrationUriFor(dest)).toBe(want);
  });

  it('asks for live peer-to-peer persistent migration, TLS when there is a credential', () => {
    const m = VIR.MIGRATE;
    expect(migrationFlags(false)).toBe(m.LIVE | m.PEER2PEER | m.PERSIST_DEST);
    expect(migrationFlags(true)).toBe(m.LIVE | m.PEER2PEER | m.PERSIST_DEST | m.TLS);
    expect(migrationFlags(true) & m.UNDEFINE_SOURCE).toBe(0);
    // Disks on the declared shared directory: libvirt cannot tell a local directory is shared.
    expect(migrationFlags(false, true)).toBe(m.LIVE | m.PEER2PEER | m.PERSIST_DEST | m.UNSAFE);
    expect(migrationFlags(false) & m.UNSAFE).toBe(0);
  });

  it('has the incoming QEMU listen on the destination address only, and caps bandwidth only when asked', () => {
    expect(migrationParams('qemu+tcp://127.0.0.1:16512/system')).toEqual({ migrate_uri: 'tcp://127.0.0.1', listen_address: '127.0.0.1' });
    expect(migrationParams('qemu+tcp://127.0.31.2:16509/system', 8)).toEqual({ migrate_uri: 'tcp://127.0.31.2', listen_address: '127.0.31.2', bandwidth: 8 });
  });
});

describe('domainTypeFor (KVM probe)', () => {
  it.each([
    [{ cpuFlags: 'flags : fpu vmx sse2', devKvmUsable: true }, 'kvm'],
    [{ cpuFlags: 'flags : fpu svm sse2', devKvmUsable: true }, 'kvm'],
    [{ cpuFlags: 'flags : fpu vmx sse2', devKvmUsable: false }, 'qemu'],
    // A cloud VM without nested virtualization: /dev/kvm is there, the CPU flags are not.
    [{ cpuFlags: 'flags : fpu sse2 hypervisor', devKvmUsable: true }, 'qemu'],
    [{ cpuFlags: 'flags : fpu vmxx', devKvmUsable: true }, 'qemu'],
  ])('%o → %s', (evidence, want) => {
    expect(domainTypeFor(evidence)).toBe(want);
  });
});
