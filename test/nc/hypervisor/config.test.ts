import { describe, expect, it } from 'vitest';
import { compileSimHvConfig, SimHvConfigError, type RawSimHvConfig } from '../../../nc/hypervisor/sim/config.js';

const base: RawSimHvConfig = { host: '127.0.9.1', stateDir: '/tmp/s', storageDir: '/tmp/shared' };

function issues(raw: RawSimHvConfig): string[] {
  try {
    compileSimHvConfig(raw);
  } catch (e) {
    if (e instanceof SimHvConfigError) return e.issues.map((i) => i.flag);
    throw e;
  }
  return [];
}

describe('compileSimHvConfig', () => {
  it('fills defaults, parses strings and freezes the result', () => {
    const c = compileSimHvConfig({ ...base, cores: '4', 'timeScale': '0.01' });
    expect(c).toEqual({
      host: '127.0.9.1', socketPath: '/run/ferry/simhv-127.0.9.1.sock', insecurePlaintext: false, plaintextPort: undefined,
      tlsPort: 16514, stateDir: '/tmp/s', storageDir: '/tmp/shared',
      capacity: { cores: 4, memoryMiB: 16384, diskGiB: 200 },
      migration: { bandwidthMbps: 1000, dirtyRateMiBps: 32, maxDowntimeMs: 300, maxIterations: 30 },
      writeIntervalMs: 1000, timeScale: 0.01, guestIgnoresAcpi: false,
    });
    expect(Object.isFrozen(c)).toBe(true);
    // --guest-ignores-acpi (a bare flag; its variable true/false/1/0): guests that ignore an ACPI reboot.
    expect(compileSimHvConfig({ ...base, guestIgnoresAcpi: true }).guestIgnoresAcpi).toBe(true);
    expect(compileSimHvConfig({ ...base, guestIgnoresAcpi: '1' }).guestIgnoresAcpi).toBe(true);
    expect(() => compileSimHvConfig({ ...base, guestIgnoresAcpi: 'yes' })).toThrow(/--guest-ignores-acpi/);
    expect(Object.isFrozen(c.capacity)).toBe(true);
  });

  it('opens the plaintext migration port only on purpose, at libvirt\'s 16509 unless told', () => {
    expect(compileSimHvConfig({ ...base, insecurePlaintext: true })).toMatchObject({ insecurePlaintext: true, plaintextPort: 16509 });
    expect(compileSimHvConfig({ ...base, insecurePlaintext: '1', port: '0' })).toMatchObject({ insecurePlaintext: true, plaintextPort: 0 });
    expect(compileSimHvConfig({ ...base, insecurePlaintext: '0' })).toMatchObject({ insecurePlaintext: false, plaintextPort: undefined });
  });

  it('takes the control socket path given, made absolute', () => {
    expect(compileSimHvConfig({ ...base, socket: 'run/h1.sock' }).socketPath).toBe(`${process.cwd()}/run/h1.sock`);
  });

  it.each<[string, RawSimHvConfig, string[]]>([
    ['a plaintext port without --insecure-plaintext', { ...base, port: '16509' }, ['--port']],
    ['a bad --insecure-plaintext variable', { ...base, insecurePlaintext: 'yes' }, ['--insecure-plaintext']],
    ['a socket path longer than a Unix socket allows', { ...base, socket: `/tmp/${'x'.repeat(110)}.sock` }, ['--socket']],
    ['missing host and dirs', {}, ['--host', '--state-dir', '--storage-dir']],
    ['a non-loopback host', { ...base, host: '10.0.0.1' }, ['--host']],
    ['an out-of-range octet', { ...base, host: '127.0.0.256' }, ['--host']],
    ['a port too large', { ...base, insecurePlaintext: true, port: '70000' }, ['--port']],
    ['a TLS port too large', { ...base, tlsPort: '70000' }, ['--tls-port']],
    ['a non-numeric memory', { ...base, memoryMiB: 'lots' }, ['--memory-mib']],
    ['fractional cores', { ...base, cores: '1.5' }, ['--cores']],
    ['zero bandwidth', { ...base, bandwidthMbps: '0' }, ['--bandwidth-mbps']],
    ['a negative dirty rate', { ...base, dirtyRateMiBps: '-1' }, ['--dirty-rate-mibps']],
    ['an empty time scale', { ...base, timeScale: ' ' }, ['--time-scale']],
    ['a tiny write interval', { ...base, writeIntervalMs: '1' }, ['--write-interval-ms']],
  ])('names the field for %s', (_name, raw, flags) => {
    expect(issues(raw)).toEqual(flags);
  });
});
