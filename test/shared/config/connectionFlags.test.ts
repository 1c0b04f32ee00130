/** The connection-limit flags, the same on every serving daemon: flags, FERRY_*_ fallbacks, bounds and the rules between them. */
import { describe, expect, it } from 'vitest';
import { parseCcConfig } from '../../../cc/config.js';
import { parseClcConfig } from '../../../clc/config.js';
import { parseNcConfig } from '../../../nc/config.js';
import { connectionLimitsOf } from '../../../shared/config/connectionFlags.js';
import { ConfigError } from '../../../shared/config/compileConfig.js';
import type { ConnectionLimits } from '../../../shared/net/connectionGuard.js';

type Parse = (argv: string[], env: Record<string, string>) => ConnectionLimits;

const DAEMONS: readonly [string, string, Parse][] = [
  ['CLC', 'FERRY_CLC', (a, e) => connectionLimitsOf(parseClcConfig(['--state-dir', 's', '--insecure-plaintext', ...a], e))],
  ['CC', 'FERRY_CC', (a, e) => connectionLimitsOf(parseCcConfig(['--state-dir', 's', '--insecure-plaintext', ...a], e))],
  ['NC', 'FERRY_NC', (a, e) => parseNcConfig(['--host', '127.0.10.1', '--state-dir', 's', '--insecure-plaintext', ...a], e).connections],
];

function problems(parse: Parse, argv: string[], env: Record<string, string> = {}): string {
  try {
    parse(argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.join('\n');
    throw e;
  }
  return '';
}

describe.each(DAEMONS)('%s connection flags', (_name, prefix, parse) => {
  it('default to a 10 s head, a 30 s request, 1024 pending connections and 256 per peer', () => {
    expect(parse([], {})).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxPending: 1024, maxPendingPerPeer: 256 });
  });

  it('are read from flags, else from the environment', () => {
    const env = { [`${prefix}_HEADERS_TIMEOUT_MS`]: '2000', [`${prefix}_REQUEST_TIMEOUT_MS`]: '4000', [`${prefix}_MAX_PENDING_CONNECTIONS`]: '100', [`${prefix}_MAX_PENDING_PER_PEER`]: '10' };
    expect(parse([], env)).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 4000, maxPending: 100, maxPendingPerPeer: 10 });
    expect(parse(['--headers-timeout-ms', '3000', '--max-pending-per-peer', '20'], env)).toEqual({ headersTimeoutMs: 3000, requestTimeoutMs: 4000, maxPending: 100, maxPendingPerPeer: 20 });
  });

  it.each([
    [['--headers-timeout-ms', '5000', '--request-timeout-ms', '4000'], /--request-timeout-ms.*must be at least --headers-timeout-ms \(5000\)/],
    [['--max-pending-connections', '10', '--max-pending-per-peer', '11'], /--max-pending-per-peer.*must be at most --max-pending-connections \(10\)/],
    [['--max-pending-connections', '0'], /--max-pending-connections.*must be at least 1/],
    [['--headers-timeout-ms', '10'], /--headers-timeout-ms.*must be at least 100/],
    [['--request-timeout-ms', 'soon'], /--request-timeout-ms.*must be a whole number/],
  ])('refuse %j', (argv, re) => {
    expect(problems(parse, argv)).toMatch(re);
  });
});
