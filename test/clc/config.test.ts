import { describe, expect, it } from 'vitest';
import { HelpShown, parseClcConfig } from '../../clc/config.js';
import { ConfigError } from '../../shared/config/compileConfig.js';
import { securityFlagCases } from '../helpers/securityFlagCases.js';

function problems(argv: string[], env: Record<string, string> = {}): string[] {
  try {
    parseClcConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

/** The state dir and mutual TLS: what every CLC needs. */
const S = ['--state-dir', 's', '--tls-dir', 'certs'];

describe('parseClcConfig', () => {
  it('fills defaults: the CC at https://127.0.0.1:8774 with --tls-dir', () => {
    const c = parseClcConfig(['--state-dir', '/tmp/x', '--tls-dir', 'certs'], {});
    expect(c).toEqual({
      host: '127.0.0.1', port: 8773, stateDir: '/tmp/x', clusters: [{ name: 'cluster01', endpoint: 'https://127.0.0.1:8774', endpoints: ['https://127.0.0.1:8774'] }],
      ccTimeoutMs: 10_000, ccInstanceTimeoutMs: 150_000, maxBodyBytes: 1024 * 1024, gateMaxWaiting: 4096, gateMaxWaitMs: 30_000, auth: 'sigv4',
      tlsDir: 'certs', insecurePlaintext: false, haTickMs: 2000, wireEncoding: 'json',
      headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxPendingConnections: 1024, maxPendingPerPeer: 256,
      eventsHistory: 10_000, eventsPollMs: 2000,
      store: 'file', etcdPrefix: 'ferry/', etcdTimeoutMs: 5000, etcdMaxTxnOps: 128, etcdMaxRequestBytes: 1572864,
      advertiseUrl: 'http://127.0.0.1:8773', leaderTtlSeconds: 10,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads the replica flags (issue 21): the advertised URL (default http://HOST:PORT) and the leader lease', () => {
    const etcd = [...S, '--store', 'etcd', '--etcd-endpoints', 'http://127.0.92.1:2379'];
    expect(parseClcConfig([...etcd, '--host', '127.0.91.254', '--port', '19701'], {}).advertiseUrl).toBe('http://127.0.91.254:19701');
    expect(parseClcConfig([...etcd, '--advertise-url', 'https://clc-1.example.com:8773/', '--leader-ttl-seconds', '5'], {})).toMatchObject({
      advertiseUrl: 'https://clc-1.example.com:8773', leaderTtlSeconds: 5,
    });
  });

  it('reads the event stream\'s flags: history, poll, a webhook (https anywhere, http only to loopback) and its token file', () => {
    const c = parseClcConfig([...S, '--events-history', '500', '--events-poll-ms', '250', '--events-webhook', 'https://hooks.example.com/ferry', '--events-webhook-token-file', '/etc/ferry/hook.token'], {});
    expect(c).toMatchObject({ eventsHistory: 500, eventsPollMs: 250, eventsWebhook: 'https://hooks.example.com/ferry', eventsWebhookTokenFile: '/etc/ferry/hook.token' });
    expect(parseClcConfig(S, { FERRY_CLC_EVENTS_WEBHOOK: 'http://127.0.77.200:18790/hook' }).eventsWebhook).toBe('http://127.0.77.200:18790/hook');
  });

  it.each([
    [['--events-webhook', 'http://hooks.example.com/x'], /^--events-webhook: plain http:\/\/ is allowed only to a loopback address/],
    [['--events-webhook', 'ftp://127.0.0.1/x'], /^--events-webhook: must be an https:\/\//],
    [['--events-webhook', 'not a url'], /^--events-webhook: is not a URL/],
    [['--events-webhook', 'https://user:pw@hooks.example.com/'], /^--events-webhook: must not carry credentials/],
    [['--events-webhook-token-file', '/x'], /^--events-webhook-token-file: needs --events-webhook/],
    [['--events-history', '10'], /^--events-history: must be at least 100/],
  ])('event stream flags %j are a configuration error', (argv, re) => {
    const p = problems([...S, ...argv], {});
    expect(p.some((x) => re.test(x)), p.join('\n')).toBe(true);
  });

  it('with --insecure-plaintext the default CC is http://127.0.0.1:8774', () => {
    expect(parseClcConfig(['--state-dir', 's', '--insecure-plaintext'], {}).clusters).toEqual([{ name: 'cluster01', endpoint: 'http://127.0.0.1:8774', endpoints: ['http://127.0.0.1:8774'] }]);
  });

  it('reads every flag', () => {
    const c = parseClcConfig(['--host', '127.0.12.5', '--port', '18773', '--state-dir', 's', '--clusters', 'a=https://127.0.12.6:1, b=https://127.0.12.7:2',
      '--cc-timeout-ms', '500', '--cc-instance-timeout-ms', '9000', '--max-body-bytes', '4096', '--gate-max-waiting', '8', '--gate-max-wait-ms', '5000', '--tls-dir', 'c',
      '--ha-tick-ms', '250', '--bmc-store', '/secure/bmc.json'], {});
    expect(c).toMatchObject({
      host: '127.0.12.5', port: 18773, ccTimeoutMs: 500, ccInstanceTimeoutMs: 9000, maxBodyBytes: 4096, gateMaxWaiting: 8, gateMaxWaitMs: 5000, tlsDir: 'c', haTickMs: 250, bmcStore: '/secure/bmc.json',
    });
    expect(c.clusters).toEqual([{ name: 'a', endpoint: 'https://127.0.12.6:1', endpoints: ['https://127.0.12.6:1'] }, { name: 'b', endpoint: 'https://127.0.12.7:2', endpoints: ['https://127.0.12.7:2'] }]);
  });

  it('a URL without partition= is another CC replica of the partition before it (issue 21)', () => {
    const c = parseClcConfig(['--state-dir', 's', '--insecure-plaintext', '--clusters', 'a=http://127.0.96.1:1,http://127.0.96.2:1, b=http://127.0.96.3:2'], {});
    expect(c.clusters).toEqual([
      { name: 'a', endpoint: 'http://127.0.96.1:1', endpoints: ['http://127.0.96.1:1', 'http://127.0.96.2:1'] },
      { name: 'b', endpoint: 'http://127.0.96.3:2', endpoints: ['http://127.0.96.3:2'] },
    ]);
  });

  // Mutual TLS is the default: exactly one of --tls-dir and --insecure-plaintext; cluster URLs' scheme follows.
  const security = securityFlagCases('FERRY_CLC', (flag) => flag);
  it.each(security.accepted)('transport security from %s', (_n, argv, env, expected) => {
    const c = parseClcConfig(['--state-dir', 's', ...argv], env);
    expect({ tlsDir: c.tlsDir, insecurePlaintext: c.insecurePlaintext }).toEqual({ tlsDir: undefined, ...expected });
  });

  it.each([
    ...security.refused,
    ['--tls-dir with an http cluster', ['--tls-dir', 'certs', '--clusters', 'a=https://127.0.12.6:1,b=http://127.0.12.7:2'], {}, /^--clusters: b: must be https:\/\/ with --tls-dir/],
    ['--insecure-plaintext with an https cluster', ['--insecure-plaintext', '--clusters', 'a=https://127.0.12.6:1'], {}, /^--clusters: a: must be http:\/\/ with --insecure-plaintext/],
  ] as const)('transport security: %s is a configuration error', (_n, argv, env, re) => {
    const p = problems(['--state-dir', 's', ...argv], env);
    expect(p.some((x) => re.test(x)), p.join('\n')).toBe(true);
  });

  it('falls back to FERRY_CLC_* and lets flags win', () => {
    const env = { FERRY_CLC_STATE_DIR: 'e', FERRY_CLC_PORT: '1234', FERRY_CLC_CLUSTERS: 'z=http://127.0.12.6:1', FERRY_CLC_INSECURE_PLAINTEXT: 'true' };
    expect(parseClcConfig([], env)).toMatchObject({ stateDir: 'e', port: 1234, clusters: [{ name: 'z' }] });
    expect(parseClcConfig(['--port', '99'], env).port).toBe(99);
  });

  it('takes --auth none (or FERRY_CLC_AUTH) for unsigned test clouds', () => {
    expect(parseClcConfig([...S, '--auth', 'none'], {}).auth).toBe('none');
    expect(parseClcConfig(S, { FERRY_CLC_AUTH: 'none' }).auth).toBe('none');
  });

  const bad: [string, string[], RegExp][] = [
    ['state dir missing', ['--tls-dir', 'certs'], /^--state-dir: is required/],
    ['host not loopback', [...S, '--host', '10.0.0.1'], /^--host: must be a loopback/],
    ['port not a number', [...S, '--port', 'http'], /^--port: must be a whole number/],
    ['port out of range', [...S, '--port', '70000'], /^--port: must be at most 65535/],
    ['cluster without URL', [...S, '--clusters', 'cluster01'], /^--clusters: "cluster01" does not start with a partition name/],
    ['cluster URL not http', [...S, '--clusters', 'c=ftp://x'], /^--clusters: c: "ftp:\/\/x" is not an http/],
    ['cluster URL with a path', [...S, '--clusters', 'c=http://127.0.0.1:1/axis2'], /^--clusters: c:/],
    ['partition twice', [...S, '--clusters', 'c=http://127.0.0.1:1,c=http://127.0.0.1:2'], /^--clusters: partition c is given twice/],
    ['no partition', [...S, '--clusters', ','], /^--clusters: at least one/],
    ['a replica twice', [...S, '--clusters', 'c=http://127.0.0.1:1,http://127.0.0.1:1'], /^--clusters: c: http:\/\/127.0.0.1:1 is given twice/],
    ['a replica over another scheme', ['--state-dir', 's', '--insecure-plaintext', '--clusters', 'c=http://127.0.0.1:1,https://127.0.0.2:1'], /^--clusters: c: must be http:\/\/ with --insecure-plaintext/],
    ['timeout too small', [...S, '--cc-timeout-ms', '5'], /^--cc-timeout-ms: must be at least 100/],
    ['body limit too small', [...S, '--max-body-bytes', '10'], /^--max-body-bytes: must be at least 1024/],
    ['gate queue of zero', [...S, '--gate-max-waiting', '0'], /^--gate-max-waiting: must be at least 1/],
    ['gate wait too short', [...S, '--gate-max-wait-ms', '10'], /^--gate-max-wait-ms: must be at least 100/],
    ['auth mode unknown', [...S, '--auth', 'sigv2'], /^--auth: must be sigv4 or none/],
    ['HA tick too short', [...S, '--ha-tick-ms', '10'], /^--ha-tick-ms: must be at least 50/],
    ['empty BMC store path', [...S, '--bmc-store', ''], /^--bmc-store:/],
    ['advertised URL without etcd', [...S, '--advertise-url', 'http://127.0.0.1:8773'], /^--advertise-url: needs --store etcd/],
    ['advertised URL with a path', [...S, '--store', 'etcd', '--etcd-endpoints', 'http://127.0.92.1:2379', '--advertise-url', 'http://127.0.0.1:8773/services'], /^--advertise-url: must be an http\(s\)/],
    ['leader lease of one second', [...S, '--leader-ttl-seconds', '1'], /^--leader-ttl-seconds: must be at least 2/],
    ['unknown flag', [...S, '--bogus'], /unknown option/],
  ];
  it.each(bad)('%s', (_n, argv, re) => {
    const p = problems(argv);
    expect(p.length).toBeGreaterThan(0);
    expect(p.some((x) => re.test(x)), p.join('\n')).toBe(true);
  });

  it('names every bad field at once', () => {
    expect(problems(['--host', '1.2.3.4', '--port', 'x']).map((p) => p.split(':')[0]).sort()).toEqual(['--host', '--port', '--state-dir']);
  });

  it('--help is not an error', () => {
    let out = '';
    expect(() => parseClcConfig(['--help'], {}, (s) => { out += s; })).toThrow(HelpShown);
    expect(out).toContain('FERRY_CLC_CLUSTERS');
  });
});
