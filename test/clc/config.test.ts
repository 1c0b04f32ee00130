import { describe, expect, it } from 'vitest';
import { HelpShown, parseClcConfig } from '../../clc/config.js';
import { ConfigError } from '../../shared/config/compileConfig.js';

function problems(argv: string[], env: Record<string, string> = {}): string[] {
  try {
    parseClcConfig(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  return [];
}

describe('parseClcConfig', () => {
  it('fills defaults', () => {
    const c = parseClcConfig(['--state-dir', '/tmp/x'], {});
    expect(c).toEqual({
      host: '127.0.0.1', port: 8773, stateDir: '/tmp/x', clusters: [{ name: 'cluster01', endpoint: 'http://127.0.0.1:8774' }],
      ccTimeoutMs: 10_000, maxBodyBytes: 1024 * 1024, gateMaxWaiting: 64, gateMaxWaitMs: 30_000, auth: 'sigv4',
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads every flag', () => {
    const c = parseClcConfig(['--host', '127.0.12.5', '--port', '18773', '--state-dir', 's', '--clusters', 'a=http://127.0.12.6:1, b=https://127.0.12.7:2',
      '--cc-timeout-ms', '500', '--max-body-bytes', '4096', '--gate-max-waiting', '8', '--gate-max-wait-ms', '5000'], {});
    expect(c).toMatchObject({ host: '127.0.12.5', port: 18773, ccTimeoutMs: 500, maxBodyBytes: 4096, gateMaxWaiting: 8, gateMaxWaitMs: 5000 });
    expect(c.clusters).toEqual([{ name: 'a', endpoint: 'http://127.0.12.6:1' }, { name: 'b', endpoint: 'https://127.0.12.7:2' }]);
  });

  it('falls back to FERRY_CLC_* and lets flags win', () => {
    const env = { FERRY_CLC_STATE_DIR: 'e', FERRY_CLC_PORT: '1234', FERRY_CLC_CLUSTERS: 'z=http://127.0.12.6:1' };
    expect(parseClcConfig([], env)).toMatchObject({ stateDir: 'e', port: 1234, clusters: [{ name: 'z' }] });
    expect(parseClcConfig(['--port', '99'], env).port).toBe(99);
  });

  it('takes --auth none (or FERRY_CLC_AUTH) for unsigned test clouds', () => {
    expect(parseClcConfig(['--state-dir', 's', '--auth', 'none'], {}).auth).toBe('none');
    expect(parseClcConfig(['--state-dir', 's'], { FERRY_CLC_AUTH: 'none' }).auth).toBe('none');
  });

  const bad: [string, string[], RegExp][] = [
    ['state dir missing', [], /^--state-dir: is required/],
    ['host not loopback', ['--state-dir', 's', '--host', '10.0.0.1'], /^--host: must be a loopback/],
    ['port not a number', ['--state-dir', 's', '--port', 'http'], /^--port: must be a whole number/],
    ['port out of range', ['--state-dir', 's', '--port', '70000'], /^--port: must be at most 65535/],
    ['cluster without URL', ['--state-dir', 's', '--clusters', 'cluster01'], /^--clusters: "cluster01" does not start with a partition name/],
    ['cluster URL not http', ['--state-dir', 's', '--clusters', 'c=ftp://x'], /^--clusters: c: "ftp:\/\/x" is not an http/],
    ['cluster URL with a path', ['--state-dir', 's', '--clusters', 'c=http://127.0.0.1:1/axis2'], /^--clusters: c:/],
    ['partition twice', ['--state-dir', 's', '--clusters', 'c=http://127.0.0.1:1,c=http://127.0.0.1:2'], /^--clusters: partition c is given twice/],
    ['no partition', ['--state-dir', 's', '--clusters', ','], /^--clusters: at least one/],
    ['timeout too small', ['--state-dir', 's', '--cc-timeout-ms', '5'], /^--cc-timeout-ms: must be at least 100/],
    ['body limit too small', ['--state-dir', 's', '--max-body-bytes', '10'], /^--max-body-bytes: must be at least 1024/],
    ['gate queue of zero', ['--state-dir', 's', '--gate-max-waiting', '0'], /^--gate-max-waiting: must be at least 1/],
    ['gate wait too short', ['--state-dir', 's', '--gate-max-wait-ms', '10'], /^--gate-max-wait-ms: must be at least 100/],
    ['auth mode unknown', ['--state-dir', 's', '--auth', 'sigv2'], /^--auth: must be sigv4 or none/],
    ['unknown flag', ['--state-dir', 's', '--bogus'], /unknown option/],
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
