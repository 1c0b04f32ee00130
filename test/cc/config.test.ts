import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HelpShown, migrationSettingsOf, parseCcConfig } from '../../cc/config.js';
import { ConfigError } from '../../shared/config/compileConfig.js';
import { securityFlagCases } from '../helpers/securityFlagCases.js';

const base = ['--state-dir', '/tmp/ferry-cc', '--insecure-plaintext'];

function problems(argv: string[], env: Record<string, string> = {}): string[] {
  try {
    parseCcConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

describe('CC configuration', () => {
  it('fills defaults and freezes the result', () => {
    const c = parseCcConfig(base, {});
    expect(c).toEqual({
      host: '127.0.0.1', port: 8774, partition: 'cluster01', nodes: [], ncPort: 8775, stateDir: '/tmp/ferry-cc',
      pollIntervalMs: 5000, ncTimeoutMs: 3000, ncInstanceTimeoutMs: 60_000, schedulePolicy: 'spread',
      maxMigrationsPerSource: 2, maxMigrationsPerDestination: 2, maxMigrationsPerCluster: 8,
      migrationPrepareTimeoutMs: 60_000, migrationReadyTimeoutMs: 60_000, migrationBaseTimeoutMs: 60_000,
      migrationPerGibTimeoutMs: 150_000, migrationStallTimeoutMs: 150_000, migrationKeyPool: 8,
      insecurePlaintext: true, wireEncoding: 'json',
      headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxPendingConnections: 1024, maxPendingPerPeer: 256,
      store: 'file', etcdPrefix: 'ferry/', etcdTimeoutMs: 5000, etcdMaxTxnOps: 128, etcdMaxRequestBytes: 1572864,
      advertiseUrl: 'http://127.0.0.1:8774', leaderTtlSeconds: 10,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('replicas (issue 21): --advertise-url and --leader-ttl-seconds with --store etcd; --advertise-url alone is a configuration error', () => {
    const etcd = [...base, '--store', 'etcd', '--etcd-endpoints', 'http://127.0.97.1:19850'];
    expect(parseCcConfig([...etcd, '--advertise-url', 'http://127.0.96.2:19860/', '--leader-ttl-seconds', '4'], {})).toMatchObject({ advertiseUrl: 'http://127.0.96.2:19860', leaderTtlSeconds: 4 });
    expect(parseCcConfig([...etcd, '--host', '127.0.96.3', '--port', '19861'], {}).advertiseUrl).toBe('http://127.0.96.3:19861');
    expect(() => parseCcConfig([...base, '--advertise-url', 'http://127.0.96.2:19860'], {})).toThrow(/--advertise-url: needs --store etcd/);
    expect(() => parseCcConfig([...etcd, '--leader-ttl-seconds', '1'], {})).toThrow(/--leader-ttl-seconds/);
  });

  it('reads FERRY_CC_* when a flag is absent; a flag wins over the environment', () => {
    const c = parseCcConfig(['--port', '9001'], {
      FERRY_CC_STATE_DIR: '/tmp/s', FERRY_CC_TLS_DIR: '/tmp/certs', FERRY_CC_PORT: '9000', FERRY_CC_NODES: '127.0.11.1, 127.0.11.2', FERRY_CC_SCHEDULE_POLICY: 'greedy',
    });
    expect(c).toMatchObject({ stateDir: '/tmp/s', port: 9001, nodes: ['127.0.11.1', '127.0.11.2'], schedulePolicy: 'greedy', tlsDir: '/tmp/certs' });
  });

  it('reads the nodes from --nodes-file (one per line, in order); with --nodes too, or unreadable, it is a configuration error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-cc-nodes-'));
    const file = join(dir, 'nodes');
    writeFileSync(file, '127.0.11.2\n127.0.11.1\n\n');
    expect(parseCcConfig([...base, '--nodes-file', file], {}).nodes).toEqual(['127.0.11.2', '127.0.11.1']);
    expect(problems([...base, '--nodes-file', file, '--nodes', '127.0.11.3'], {}).join('\n')).toMatch('not both');
    expect(problems([...base, '--nodes-file', join(dir, 'absent')], {}).join('\n')).toMatch('cannot read');
    writeFileSync(file, '127.0.11.1\n10.0.0.1\n');
    expect(problems([...base, '--nodes-file', file], {}).join('\n')).toMatch('10.0.0.1 is not a loopback');
    rmSync(dir, { recursive: true, force: true });
  });

  // Mutual TLS is the default: exactly one of --tls-dir and --insecure-plaintext (or their variables).
  const security = securityFlagCases('FERRY_CC', (flag) => flag);
  it.each(security.accepted)('transport security from %s', (_n, argv, env, expected) => {
    const c = parseCcConfig(['--state-dir', 's', ...argv], env);
    expect({ tlsDir: c.tlsDir, insecurePlaintext: c.insecurePlaintext }).toEqual({ tlsDir: undefined, ...expected });
  });

  it.each(security.refused)('transport security: %s is a configuration error', (_n, argv, env, re) => {
    const p = problems(['--state-dir', 's', ...argv], env);
    expect(p.some((x) => re.test(x)), p.join('\n')).toBe(true);
  });

  it.each([
    [['--host', '10.0.0.1'], '--host:'],
    [['--port', 'eighty'], '--port:'],
    [['--port', '70000'], '--port:'],
    [['--partition', 'no spaces'], '--partition:'],
    [['--nodes', '127.0.11.1,192.168.0.1'], '--nodes: 192.168.0.1 is not a loopback'],
    [['--nodes', '127.0.11.1,127.0.11.1'], '--nodes: 127.0.11.1 is registered twice'],
    [['--nc-port', '0'], '--nc-port:'],
    [['--poll-interval-ms', '0'], '--poll-interval-ms:'],
    [['--nc-timeout-ms', '-5'], '--nc-timeout-ms:'],
    [['--schedule-policy', 'roundrobin'], '--schedule-policy:'],
    [['--bogus'], "unknown option '--bogus'"],
    [['--max-migrations-per-source', '0'], '--max-migrations-per-source:'],
    [['--max-migrations-per-destination', 'two'], '--max-migrations-per-destination:'],
    [['--max-migrations-per-cluster', '1.5'], '--max-migrations-per-cluster:'],
    [['--migration-key-pool', '-1'], '--migration-key-pool:'],
    [['--migration-key-pool', '257'], '--migration-key-pool:'],
    [['--migration-prepare-timeout-ms', '0'], '--migration-prepare-timeout-ms:'],
    [['--migration-ready-timeout-ms', '-1'], '--migration-ready-timeout-ms:'],
    [['--migration-base-timeout-ms', 'x'], '--migration-base-timeout-ms:'],
    [['--migration-per-gib-timeout-ms', '0'], '--migration-per-gib-timeout-ms:'],
    [['--migration-stall-timeout-ms', '0'], '--migration-stall-timeout-ms:'],
    [['--migration-uri-template', 'http://dest:16509'], '--migration-uri-template: must contain {host}'],
  ])('names the bad field: %j', (argv, expected) => {
    expect(problems([...base, ...argv]).join('\n')).toContain(expected);
  });

  it('migration flags (and their FERRY_CC_* variables) become the service\'s migration settings', () => {
    const c = parseCcConfig([...base, '--max-migrations-per-source', '3', '--migration-uri-template', 'tcp://{host}:49152'], {
      FERRY_CC_MAX_MIGRATIONS_PER_CLUSTER: '16', FERRY_CC_MIGRATION_STALL_TIMEOUT_MS: '1000', FERRY_CC_MIGRATION_PER_GIB_TIMEOUT_MS: '7',
    });
    const m = migrationSettingsOf(c);
    expect(m.limits).toEqual({ perSource: 3, perDestination: 2, perCluster: 16 });
    expect(m.timeouts).toEqual({ prepareMs: 60_000, readyMs: 60_000, migratingBaseMs: 60_000, migratingPerGiBMs: 7, stallMs: 1000 });
    expect(m.uriTemplate).toBe('tcp://{host}:49152');
    expect(m.newHex()).toMatch(/^[0-9a-f]{8}$/);
  });

  it('the default migration endpoint is the TLS listener under --tls-dir and the plaintext one otherwise', () => {
    expect(migrationSettingsOf(parseCcConfig(['--state-dir', '/tmp/ferry-cc', '--tls-dir', '/tmp/certs'], {})).uriTemplate).toBe('https://{host}:16514');
    expect(migrationSettingsOf(parseCcConfig(base, {})).uriTemplate).toBe('http://{host}:16509');
  });

  it('reports every bad field at once, including a missing state dir', () => {
    const p = problems(['--port', 'x', '--schedule-policy', 'y']);
    expect(p.map((s) => s.split(':')[0])).toEqual(['--port', '--state-dir', '--schedule-policy']);
  });

  it('--help prints usage and asks for a clean exit', () => {
    let out = '';
    expect(() => parseCcConfig(['--help'], {}, (s) => { out += s; })).toThrow(HelpShown);
    expect(out).toContain('--schedule-policy');
  });
});
