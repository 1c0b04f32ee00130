import { describe, expect, it } from 'vitest';
import { parseNcConfig } from '../../nc/config.js';
import { ConfigError } from '../../shared/config/compileConfig.js';
import { securityFlagCases } from '../helpers/securityFlagCases.js';

const BASE = ['--host', '127.0.10.1', '--state-dir', '/tmp/nc', '--insecure-plaintext'];

function problems(argv: string[], env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseNcConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

describe('NC configuration', () => {
  it('fills defaults and derives the sim socket from the host', () => {
    const c = parseNcConfig(BASE, {});
    expect(c).toEqual({
      host: '127.0.10.1', port: 8775, stateDir: '/tmp/nc', maxBodyBytes: 1024 * 1024,
      hypervisor: { kind: 'sim', socket: '/run/ferry/simhv-127.0.10.1.sock' }, insecurePlaintext: true,
      connections: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxPending: 1024, maxPendingPerPeer: 256 }, wireEncoding: 'json',
      rebootTimeoutMs: 120_000,
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.hypervisor)).toBe(true);
  });

  it('takes the reboot fallback\'s bound from --reboot-timeout-ms or FERRY_NC_REBOOT_TIMEOUT_MS; nonsense is refused naming the flag', () => {
    expect(parseNcConfig([...BASE, '--reboot-timeout-ms', '5000'], {}).rebootTimeoutMs).toBe(5000);
    expect(parseNcConfig(BASE, { FERRY_NC_REBOOT_TIMEOUT_MS: '7000' }).rebootTimeoutMs).toBe(7000);
    expect(() => parseNcConfig([...BASE, '--reboot-timeout-ms', 'soon'], {})).toThrow(/--reboot-timeout-ms/);
    expect(() => parseNcConfig([...BASE, '--reboot-timeout-ms', '0'], {})).toThrow(/--reboot-timeout-ms/);
  });

  it('falls back to FERRY_NC_* and lets flags win', () => {
    const env = { FERRY_NC_HOST: '127.0.10.2', FERRY_NC_STATE_DIR: '/s', FERRY_NC_PORT: '9000', FERRY_NC_SIM_SOCKET: '/var/run/h2.sock', FERRY_NC_TLS_DIR: '/c' };
    expect(parseNcConfig([], env)).toMatchObject({ host: '127.0.10.2', port: 9000, stateDir: '/s', hypervisor: { socket: '/var/run/h2.sock' }, tlsDir: '/c' });
    expect(parseNcConfig(['--sim-socket', '/tmp/x/simhv.sock'], env).hypervisor).toEqual({ kind: 'sim', socket: '/tmp/x/simhv.sock' });
    expect(parseNcConfig(['--port', '9001'], env).port).toBe(9001);
  });

  it('takes an optional CC URL for change hints', () => {
    expect(parseNcConfig([...BASE, '--cc-url', 'http://127.0.0.1:8774'], {}).ccUrl).toBe('http://127.0.0.1:8774');
    expect(parseNcConfig(BASE, { FERRY_NC_CC_URL: 'http://127.0.10.9:8774' }).ccUrl).toBe('http://127.0.10.9:8774');
    expect('ccUrl' in parseNcConfig(BASE, {})).toBe(false);
  });

  it('takes the CC replicas\' URLs, comma-separated (issue 21): hints go to whichever leads', () => {
    const c = parseNcConfig([...BASE, '--cc-url', 'http://127.0.96.254:19860, http://127.0.96.254:19861'], {});
    expect(c).toMatchObject({ ccUrl: 'http://127.0.96.254:19860', ccUrls: ['http://127.0.96.254:19860', 'http://127.0.96.254:19861'] });
    expect(() => parseNcConfig([...BASE, '--cc-url', 'http://127.0.96.254:19860,cc:1'], {})).toThrow(/--cc-url \(FERRY_NC_CC_URL\): must be an http/);
    expect(() => parseNcConfig([...BASE, '--cc-url', ','], {})).toThrow(/--cc-url/);
  });

  it.each([
    ['a bad CC URL', [...BASE, '--cc-url', 'cc:8774'], '--cc-url (FERRY_NC_CC_URL): must be an http'],
    ['a missing host', ['--state-dir', '/s'], '--host (FERRY_NC_HOST): is required'],
    ['a missing state dir', ['--host', '127.0.10.1'], '--state-dir (FERRY_NC_STATE_DIR): is required'],
    ['a non-loopback host', ['--host', '10.0.0.1', '--state-dir', '/s'], '--host (FERRY_NC_HOST): must be a loopback'],
    ['a bad port', [...BASE, '--port', '70000'], '--port (FERRY_NC_PORT): must be at most 65535'],
    ['a non-numeric port', [...BASE, '--port', 'http'], '--port (FERRY_NC_PORT): must be a whole number'],
    ['an unknown hypervisor', [...BASE, '--hypervisor', 'xen'], '--hypervisor (FERRY_NC_HYPERVISOR): must be one of: sim, libvirt'],
    ['libvirt without a URI', [...BASE, '--hypervisor', 'libvirt'], '--libvirt-uri (FERRY_NC_LIBVIRT_URI): is required with --hypervisor libvirt'],
    ['a libvirt URI for the sim', [...BASE, '--libvirt-uri', 'qemu:///system'], '--libvirt-uri (FERRY_NC_LIBVIRT_URI): needs --hypervisor libvirt'],
    ['a bad libvirt URI', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', '/system'], '--libvirt-uri (FERRY_NC_LIBVIRT_URI): must be a libvirt URI'],
    ['a zero migration bandwidth', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-migration-bandwidth', '0'], '--libvirt-migration-bandwidth (FERRY_NC_LIBVIRT_MIGRATION_BANDWIDTH): must be at least 1'],
    ['a tunnel port out of range', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-tunnel-port', '70000'], '--libvirt-tunnel-port (FERRY_NC_LIBVIRT_TUNNEL_PORT): must be 1-65535'],
    ['an unknown tunnel local end', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-tunnel-local', 'any'], '--libvirt-tunnel-local (FERRY_NC_LIBVIRT_TUNNEL_LOCAL): must be one of: loopback, host'],
    ['a tunnel for the sim', [...BASE, '--libvirt-tunnel-port', '16515'], '--libvirt-tunnel-port (FERRY_NC_LIBVIRT_TUNNEL_PORT): needs --hypervisor libvirt'],
    ['tunnel data ports without a tunnel', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-tunnel-data-ports', '17600-17699'], '--libvirt-tunnel-data-ports (FERRY_NC_LIBVIRT_TUNNEL_DATA_PORTS): needs --libvirt-tunnel-port'],
    ['reversed tunnel data ports', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-tunnel-data-ports', '17700-17600'], '--libvirt-tunnel-data-ports (FERRY_NC_LIBVIRT_TUNNEL_DATA_PORTS): must be MIN-MAX'],
    ['a tiny guest memory cap', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-guest-memory-cap', '8'], '--libvirt-guest-memory-cap (FERRY_NC_LIBVIRT_GUEST_MEMORY_CAP): must be at least 16'],
    ['the removed sim URL', [...BASE, '--sim-url', 'http://127.0.10.1:16509'], '--sim-url (FERRY_NC_SIM_URL): was removed: the simulated hypervisor\'s control API is an owner-only Unix socket now; give --sim-socket'],
    ['an empty sim socket', [...BASE, '--sim-socket', ''], '--sim-socket (FERRY_NC_SIM_SOCKET): must name a Unix socket'],
    ['a sim socket path too long for a Unix socket', [...BASE, '--sim-socket', `/run/${'x'.repeat(110)}.sock`], '--sim-socket (FERRY_NC_SIM_SOCKET): must be at most 107 bytes'],
    ['a sim socket for libvirt', [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--sim-socket', '/run/s.sock'], '--sim-socket (FERRY_NC_SIM_SOCKET): is for --hypervisor sim'],
    ['a tiny body limit', [...BASE, '--max-body-bytes', '10'], '--max-body-bytes (FERRY_NC_MAX_BODY_BYTES): must be at least 1024'],
    ['an unknown flag', [...BASE, '--colour'], "unknown option '--colour'"],
  ])('names the field for %s', (_n, argv, message) => {
    const p = problems(argv);
    expect(p.some((x) => x.includes(message))).toBe(true);
  });

  // Mutual TLS is the default: exactly one of --tls-dir and --insecure-plaintext; --cc-url's scheme follows.
  const HOST_AND_STATE = ['--host', '127.0.10.1', '--state-dir', '/tmp/nc'];
  const security = securityFlagCases('FERRY_NC', (flag, env) => `${flag} (${env})`);
  it.each([
    ...security.accepted,
    ['--tls-dir with an https CC', ['--tls-dir', 'certs', '--cc-url', 'https://127.0.0.1:8774'], {}, { tlsDir: 'certs', insecurePlaintext: false }],
    ['--insecure-plaintext with an http CC', ['--insecure-plaintext', '--cc-url', 'http://127.0.0.1:8774'], {}, { insecurePlaintext: true }],
  ] as const)('transport security from %s', (_n, argv, env, expected) => {
    const c = parseNcConfig([...HOST_AND_STATE, ...argv], env);
    // The NC's config holds insecurePlaintext only when it is true.
    expect({ tlsDir: c.tlsDir, insecurePlaintext: c.insecurePlaintext ?? false }).toEqual({ tlsDir: undefined, ...expected });
  });

  it.each([
    ...security.refused,
    ['--tls-dir with an http CC', ['--tls-dir', 'certs', '--cc-url', 'http://127.0.0.1:8774'], {}, /^--cc-url \(FERRY_NC_CC_URL\): must be https:\/\/ with --tls-dir/],
    ['--insecure-plaintext with an https CC', ['--insecure-plaintext', '--cc-url', 'https://127.0.0.1:8774'], {}, /^--cc-url \(FERRY_NC_CC_URL\): must be http:\/\/ with --insecure-plaintext/],
  ] as const)('transport security: %s is a configuration error', (_n, argv, env, re) => {
    const p = problems([...HOST_AND_STATE, ...argv], env);
    expect(p.some((x) => re.test(x)), p.join('\n')).toBe(true);
  });

  it('configures the libvirt driver', () => {
    const c = parseNcConfig([...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu+tcp://127.0.0.1:16511/system',
      '--libvirt-tls-dir', '/lab/host1/tls', '--libvirt-guest-memory-cap', '64', '--libvirt-migration-bandwidth', '8'], {});
    expect(c.hypervisor).toEqual({
      kind: 'libvirt', uri: 'qemu+tcp://127.0.0.1:16511/system', migrationTlsDir: '/lab/host1/tls', guestMemoryCapMiB: 64, migrationBandwidthMiBs: 8,
    });
    expect(parseNcConfig(BASE, { FERRY_NC_HYPERVISOR: 'libvirt', FERRY_NC_LIBVIRT_URI: 'qemu:///system' }).hypervisor)
      .toEqual({ kind: 'libvirt', uri: 'qemu:///system' });
  });

  it('configures per-migration tunnels (local end on loopback unless told)', () => {
    const libvirt = [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system', '--libvirt-tunnel-port', '16515'];
    expect(parseNcConfig(libvirt, {}).hypervisor).toEqual({ kind: 'libvirt', uri: 'qemu:///system', tunnel: { port: 16515, local: 'loopback' } });
    expect(parseNcConfig([...libvirt, '--libvirt-tunnel-local', 'host', '--libvirt-tunnel-data-ports', '17600-17699'], {}).hypervisor)
      .toMatchObject({ tunnel: { port: 16515, local: 'host', dataPorts: { min: 17600, max: 17699 } } });
  });

  it('puts guests\' disks on the shared disk directory and boots a lab kernel, both only with libvirt', () => {
    const libvirt = [...BASE, '--hypervisor', 'libvirt', '--libvirt-uri', 'qemu:///system'];
    expect(parseNcConfig([...libvirt, '--libvirt-disk-dir', '/shared/disks', '--libvirt-guest-kernel', '/lab/vmlinuz', '--libvirt-guest-initrd', '/lab/initrd.img'], {}).hypervisor)
      .toEqual({ kind: 'libvirt', uri: 'qemu:///system', diskDir: '/shared/disks', directKernel: { kernel: '/lab/vmlinuz', initrd: '/lab/initrd.img' } });
    expect(() => parseNcConfig([...libvirt, '--libvirt-guest-kernel', '/lab/vmlinuz'], {})).toThrow(/--libvirt-guest-initrd .*goes with --libvirt-guest-kernel and --libvirt-guest-initrd both/);
    expect(() => parseNcConfig([...BASE, '--libvirt-disk-dir', '/shared/disks'], {})).toThrow(/--libvirt-disk-dir .*needs --hypervisor libvirt/);
  });

  it('reports every bad field at once', () => {
    expect(problems(['--port', '0'])).toHaveLength(3);
  });
});
