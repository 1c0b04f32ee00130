/**
 * The cloud layout (scripts/cloudLayout.ts) the demo and the integration tests start: every tier
 * link over mutual TLS with the PKI in <baseDir>/certs, or plain HTTP only on explicit opt-out.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ccUrl, certsDirOf, cloudLayout, ensureCloudPki, ncUrl, simSocketOf, storageDirOf, type CloudLayoutOptions } from '../../scripts/cloudLayout.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';

const base = mkdtempSync(join(tmpdir(), 'ferry-layout-'));
const layout: CloudLayoutOptions = { baseDir: base, controllerHost: '127.0.22.254', nodeHosts: ['127.0.22.1', '127.0.22.2'] };
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The value after `flag` in a process's args, or undefined. */
function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

describe('cloudLayout', () => {
  const specs = cloudLayout(layout);
  const tiers = specs.filter((s) => !s.name.startsWith('simhv-'));

  it('passes --tls-dir <baseDir>/certs to the CLC, the CC and every NC, and never --insecure-plaintext', () => {
    expect(tiers.map((s) => s.name)).toEqual(['nc-127.0.22.1', 'nc-127.0.22.2', 'cc', 'clc']);
    for (const s of tiers) {
      expect(flag(s.args, '--tls-dir'), s.name).toBe(join(base, 'certs'));
      expect(s.args, s.name).not.toContain('--insecure-plaintext');
    }
  });

  it('dials the CC over https from the NCs and the CLC, and waits for https ready lines', () => {
    expect(ccUrl(layout)).toBe('https://127.0.22.254:8774');
    expect(ncUrl(layout, '127.0.22.1')).toBe('https://127.0.22.1:8775');
    for (const s of tiers.filter((t) => t.name.startsWith('nc-'))) {
      expect(flag(s.args, '--cc-url')).toBe('https://127.0.22.254:8774');
      expect(s.ready).toBe('nc listening on https://');
    }
    expect(flag(specs.find((s) => s.name === 'clc')?.args ?? [], '--clusters')).toBe('cluster01=https://127.0.22.254:8774');
    expect(specs.find((s) => s.name === 'cc')?.ready).toBe('cc listening on https://');
  });

  it('gives each simhv an owner-only control socket in its state dir, and its NC that socket; no plaintext port', () => {
    for (const host of layout.nodeHosts) {
      const sim = specs.find((s) => s.name === `simhv-${host}`);
      const nc = specs.find((s) => s.name === `nc-${host}`);
      expect(simSocketOf(layout, host)).toBe(join(base, 'hosts', host, 'simhv', 'simhv.sock'));
      expect(flag(sim?.args ?? [], '--socket')).toBe(simSocketOf(layout, host));
      expect(flag(nc?.args ?? [], '--sim-socket')).toBe(simSocketOf(layout, host));
      expect(sim?.args).not.toContain('--port');
      expect(sim?.args).not.toContain('--insecure-plaintext');
    }
  });

  it('runs no heartbeat process on simulated hosts (their hypervisor writes the heartbeat)', () => {
    expect(specs.filter((s) => s.name.startsWith('heartbeat-'))).toEqual([]);
  });

  it('on libvirt hosts with a run dir, starts ferry-heartbeat per host before its NC, on the NCs\' shared storage', () => {
    const lv = cloudLayout({
      ...layout, hypervisorArgs: (h) => ['--hypervisor', 'libvirt', '--libvirt-uri', `qemu+tcp://${h}:16509/system`],
      libvirtRunDir: (h) => `/lab/${h}/run`, heartbeatIntervalMs: 500,
    });
    expect(lv.map((s) => s.name)).toEqual(['heartbeat-127.0.22.1', 'nc-127.0.22.1', 'heartbeat-127.0.22.2', 'nc-127.0.22.2', 'cc', 'clc']);
    for (const host of layout.nodeHosts) {
      const hb = lv.find((s) => s.name === `heartbeat-${host}`);
      const nc = lv.find((s) => s.name === `nc-${host}`);
      expect(hb?.entry).toBe('dist/nc/ha/heartbeat/main.js');
      expect(flag(hb?.args ?? [], '--host')).toBe(host);
      expect(flag(hb?.args ?? [], '--libvirt-run-dir')).toBe(`/lab/${host}/run`);
      expect(flag(hb?.args ?? [], '--interval-ms')).toBe('500');
      expect(flag(hb?.args ?? [], '--storage-dir')).toBe(storageDirOf(layout));
      expect(flag(nc?.args ?? [], '--storage-dir')).toBe(storageDirOf(layout));
    }
  });

  it('insecurePlaintext: true passes --insecure-plaintext and http:// instead, and creates no PKI', () => {
    const plain = { ...layout, baseDir: join(base, 'plain'), insecurePlaintext: true };
    const plainTiers = cloudLayout(plain).filter((s) => !s.name.startsWith('simhv-'));
    for (const s of plainTiers) {
      expect(s.args, s.name).toContain('--insecure-plaintext');
      expect(s.args, s.name).not.toContain('--tls-dir');
    }
    expect(flag(plainTiers.find((s) => s.name === 'clc')?.args ?? [], '--clusters')).toBe('cluster01=http://127.0.22.254:8774');
    // Its hypervisors take credential-less migration streams on libvirt's plaintext port; control stays on the socket.
    for (const sim of cloudLayout(plain).filter((s) => s.name.startsWith('simhv-'))) {
      expect(sim.args).toContain('--insecure-plaintext');
      expect(flag(sim.args, '--port')).toBe('16509');
      expect(flag(sim.args, '--socket')).toMatch(/simhv\.sock$/);
    }
    expect(ensureCloudPki(plain)).toBeUndefined();
    expect(() => statSync(certsDirOf(plain))).toThrow();
  });
});

describe('ensureCloudPki', () => {
  it('issues the CA and one identity per component, each loadable with its role; a re-run keeps every file', () => {
    const first = ensureCloudPki(layout);
    expect(first?.written.slice().sort()).toEqual([
      'ca.key', 'ca.pem', 'cc-127.0.22.254.key', 'cc-127.0.22.254.pem', 'clc-127.0.22.254.key', 'clc-127.0.22.254.pem',
      'migration-ca.key', 'migration-ca.pem', 'nc-127.0.22.1.key', 'nc-127.0.22.1.pem', 'nc-127.0.22.2.key', 'nc-127.0.22.2.pem',
    ]);
    const dir = certsDirOf(layout);
    expect(loadTlsIdentity(dir, 'clc', '127.0.22.254').role).toBe('clc');
    expect(loadTlsIdentity(dir, 'cc', '127.0.22.254').role).toBe('cc');
    expect(loadTlsIdentity(dir, 'nc', '127.0.22.2').role).toBe('nc');
    expect(statSync(join(dir, 'nc-127.0.22.1.key')).mode & 0o777).toBe(0o600);

    const ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
    const again = ensureCloudPki(layout);
    expect(again?.written).toEqual([]);
    expect(again?.kept).toHaveLength(12);
    expect(readFileSync(join(dir, 'ca.pem'), 'utf8')).toBe(ca);
  });

  it('a host added to the layout gets its certificate from the existing CA', () => {
    const ca = readFileSync(join(certsDirOf(layout), 'ca.pem'), 'utf8');
    const grown = ensureCloudPki({ ...layout, nodeHosts: [...layout.nodeHosts, '127.0.22.3'] });
    expect(grown?.written.slice().sort()).toEqual(['nc-127.0.22.3.key', 'nc-127.0.22.3.pem']);
    expect(readFileSync(join(certsDirOf(layout), 'ca.pem'), 'utf8')).toBe(ca);
  });
});
