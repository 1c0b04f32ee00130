/** The fence-agent protocol (clc/ha/power/fenceAgentProtocol.ts): settings, stdin lines, exit meanings. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PowerErrors } from '../../../../clc/ha/power/errors.js';
import {
  agentEnv, agentStdin, compileFenceAgentConfig, interpretExit, isRedfishPath, lastLine, redact, type AgentAction,
} from '../../../../clc/ha/power/fenceAgentProtocol.js';
import { isFerryError } from '../../../../shared/errors/registry.js';

const good = {
  agent: 'fence_ipmilan', target: 'node-1',
  options: { ip: '127.0.30.1', ipport: '16230', username: 'ferry', lanplus: '0', cipher: '17' },
  password: 's3cret', timeoutMs: 5000,
};

const redfish = {
  agent: 'fence_redfish', target: 'node-2',
  options: { ip: '127.0.35.1', ipport: '16350', username: 'ferry', ssl_insecure: '1', systems_uri: '/redfish/v1/Systems/System.Embedded.1' },
  password: 's3cret', timeoutMs: 15_000,
};

const parseLines = (stdin: string) => new Map(stdin.trimEnd().split('\n').map((l) => l.split('=', 2) as [string, string]));

describe('compileFenceAgentConfig', () => {
  it('accepts good settings and freezes them', () => {
    const cfg = compileFenceAgentConfig(good);
    expect(cfg.agent).toBe('fence_ipmilan');
    expect(Object.isFrozen(cfg) && Object.isFrozen(cfg.options)).toBe(true);
  });

  const bad: [string, unknown][] = [
    ['an agent that is not fence_*', { ...good, agent: 'rm' }],
    ['a path as agent', { ...good, agent: '/usr/sbin/fence_ipmilan' }],
    ['a newline in an option (would add a stdin line)', { ...good, options: { ip: '127.0.30.1\naction=off' } }],
    ['a newline in the password', { ...good, password: 'a\nb' }],
    ['the password among the options', { ...good, options: { passwd: 'x' } }],
    ['the action among the options', { ...good, options: { action: 'reboot' } }],
    ['verbose output (prints the ipmitool command with its password)', { ...good, options: { verbose: '1' } }],
    ['an option name with capitals', { ...good, options: { IP: 'x' } }],
    ['a timeout under a second', { ...good, timeoutMs: 10 }],
    ['a port that is not a number', { ...good, options: { ipport: '62x0' } }],
    ['a port out of range', { ...good, options: { ipport: '70000' } }],
    ['ssl_insecure=0 (fencing.py reads any value as on)', { ...redfish, options: { ...redfish.options, ssl_insecure: '0' } }],
    ['ssl_secure with a value other than 1', { ...redfish, options: { ...redfish.options, ssl_secure: 'yes' } }],
    ['a relative systems_uri', { ...redfish, options: { ...redfish.options, systems_uri: 'redfish/v1/Systems/1' } }],
    ['a systems_uri with a space', { ...redfish, options: { ...redfish.options, systems_uri: '/redfish/v1/Systems/1 x' } }],
    ['a systems_uri climbing with ..', { ...redfish, options: { ...redfish.options, systems_uri: '/redfish/v1/../../etc' } }],
    ['a redfish_uri that is a URL', { ...redfish, options: { ...redfish.options, redfish_uri: 'https://evil/redfish/v1' } }],
  ];
  it.each(bad)('refuses %s with a coded error', (_name, raw) => {
    try {
      compileFenceAgentConfig(raw);
      expect.unreachable();
    } catch (e) {
      expect(isFerryError(e) && e.code).toBe('InvalidFenceConfig');
      expect(String((e as Error).message)).not.toContain('s3cret');
    }
  });
});

describe('Redfish settings', () => {
  it('accepts what fence_redfish needs and sends it as is', () => {
    const lines = parseLines(agentStdin(compileFenceAgentConfig(redfish), 'off'));
    expect([lines.get('ssl_insecure'), lines.get('systems_uri'), lines.get('ipport')]).toEqual(['1', '/redfish/v1/Systems/System.Embedded.1', '16350']);
  });

  it.each(['/', '/redfish/v1', '/redfish/v1/', '/redfish/v1/Systems/System.Embedded.1', '/redfish/v1/Systems/437XR1138R2'])('%s is a Redfish path', (p) => {
    expect(isRedfishPath(p)).toBe(true);
  });

  it('refuses a long run of path characters ending in a blank at once (the old pattern backtracked exponentially)', () => {
    expect(isRedfishPath(`/${'a'.repeat(200)} b`)).toBe(false);
  });

  it('a Redfish path is absolute, without blanks, empty or dot segments', () => {
    // Path-like inputs (random strings are almost never accepted, so the assertions would not run):
    // segments that are fine, empty, dots, blanks or odd characters, with or without the leading slash.
    const segment = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9._-]{1,10}$/),
      fc.constantFrom('', '.', '..', 'a b', 'tab\there', 'redfish', 'v1', 'Systems', 'System.Embedded.1'),
    );
    const pathLike = fc.tuple(fc.boolean(), fc.array(segment, { maxLength: 5 }), fc.boolean())
      .map(([lead, segs, trail]) => `${lead ? '/' : ''}${segs.join('/')}${trail ? '/' : ''}`);
    let runs = 0;
    let accepted = 0;
    fc.assert(fc.property(pathLike, (v) => {
      runs++;
      if (!isRedfishPath(v)) return;
      accepted++;
      expect(v.startsWith('/')).toBe(true);
      expect(v).not.toMatch(/\s|\/\/|(?:^|\/)\.\.?(?:\/|$)/);
    }), { numRuns: 1000 });
    // Both sides are exercised: a good share is accepted (and checked), and some is refused.
    expect(accepted).toBeGreaterThan(runs / 10);
    expect(accepted).toBeLessThan(runs);
  });
});

describe('agentStdin', () => {
  it('sends every option, the password and the action as key=value lines', () => {
    const lines = parseLines(agentStdin(compileFenceAgentConfig(good), 'off'));
    expect(lines.get('ip')).toBe('127.0.30.1');
    expect(lines.get('password')).toBe('s3cret');
    expect(lines.get('action')).toBe('off');
  });

  it('forces lanplus=1 and cipher=3 on fence_ipmilan, whatever the settings say', () => {
    const lines = parseLines(agentStdin(compileFenceAgentConfig(good), 'status'));
    expect([lines.get('lanplus'), lines.get('cipher')]).toEqual(['1', '3']);
  });

  it("keeps the agent's own power_timeout inside the hard bound, unless set explicitly", () => {
    expect(parseLines(agentStdin(compileFenceAgentConfig(good), 'on')).get('power_timeout')).toBe('4');
    expect(parseLines(agentStdin(compileFenceAgentConfig({ ...good, timeoutMs: 1000 }), 'on')).get('power_timeout')).toBe('1');
    expect(parseLines(agentStdin(compileFenceAgentConfig({ ...good, options: { power_timeout: '9' } }), 'on')).get('power_timeout')).toBe('9');
    expect(parseLines(agentStdin(compileFenceAgentConfig({ ...good, agent: 'fence_redfish' }), 'on')).get('cipher')).toBe('17');
  });

  it('silences Python deprecation warnings', () => expect(agentEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', PYTHONWARNINGS: 'ignore::DeprecationWarning' }));
});

describe('interpretExit', () => {
  const rows: [AgentAction, number | null, string, string][] = [
    ['status', 0, 'Status: ON', 'on'],
    ['status', 2, 'Status: OFF', 'off'],
    ['status', 1, '2026-01-01 00:00:00,000 ERROR: Failed: Unable to obtain correct plug status or plug is not available', 'FenceAgentFailed: Failed: Unable to obtain correct plug status or plug is not available'],
    ['off', 0, 'Success: Powered OFF', 'done'],
    ['off', 0, 'Success: Already OFF', 'already off'],
    ['on', 0, 'Success: Powered ON', 'done'],
    ['reboot', 0, 'Success: Rebooted', 'done'],
    ['off', 1, 'ERROR: Failed: Timed out waiting to power OFF', 'FenceAgentFailed: Failed: Timed out waiting to power OFF'],
    ['on', 2, '', 'FenceAgentFailed: (no output)'],
    ['status', 5, 'weird', 'FenceAgentProtocolError: exit code 5: weird'],
    ['off', null, '', 'FenceAgentProtocolError: killed by SIGTERM'],
  ];
  it.each(rows)('%s exit %s (%s)', (action, code, out, want) => {
    const r = interpretExit(action, code, code === null ? 'SIGTERM' : null, out);
    const got = r.ok ? (r.state ?? (r.alreadyOff ? 'already off' : 'done')) : `${r.code}: ${r.detail}`;
    expect(got).toBe(want);
  });
});

describe('redact and lastLine', () => {
  it('removes every occurrence of the password', () => expect(redact('ipmitool -P pw -U pw2pw', 'pw')).toBe('ipmitool -P *** -U ***2***'));
  it('takes the last non-empty line without the log prefix', () => expect(lastLine('a\n2026-11-24 03:58:28,687 ERROR: Connection timed out\n\n\n')).toBe('Connection timed out'));
  it("skips fencing.py's usage hint after the reason", () => {
    expect(lastLine('2026-11-24 06:08:33,708 ERROR: Unable to get PowerState: https://127.0.35.1:16350/redfish/v1/Systems/9\n\n'
      + "2026-11-24 06:08:33,708 ERROR: Please use '-h' for usage\n\n")).toBe('Unable to get PowerState: https://127.0.35.1:16350/redfish/v1/Systems/9');
  });
  it('has a code for every outcome', () => {
    for (const c of ['FenceAgentFailed', 'FenceAgentProtocolError', 'FenceAgentTimedOut', 'FenceAgentNotFound', 'InvalidFenceConfig']) expect(PowerErrors.has(c)).toBe(true);
  });
});
