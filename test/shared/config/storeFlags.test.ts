/** The --store flags of the CLC and the CC (shared/config/storeFlags.ts) through the daemons' real parsers. */
import { describe, expect, it } from 'vitest';
import { parseCcConfig } from '../../../cc/config.js';
import { parseClcConfig } from '../../../clc/config.js';
import { ConfigError } from '../../../shared/config/compileConfig.js';

const BASE = ['--state-dir', '/tmp/x', '--insecure-plaintext'];
const PARSERS = [
  ['clc', (argv: string[]) => parseClcConfig([...BASE, ...argv], {})],
  ['cc', (argv: string[]) => parseCcConfig([...BASE, ...argv], {})],
] as const;

function problems(f: () => unknown): string[] {
  try {
    f();
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
}

describe.each(PARSERS)('%s --store', (_tier, parse) => {
  it('defaults to file, with etcd\'s defaults filled in', () => {
    const c = parse([]);
    expect(c.store).toBe('file');
    expect(c.etcdEndpoints).toBeUndefined();
    expect(c.etcdPrefix).toBe('ferry/');
    expect([c.etcdTimeoutMs, c.etcdMaxTxnOps, c.etcdMaxRequestBytes]).toEqual([5000, 128, 1572864]);
  });

  it('takes etcd with its endpoints and prefix', () => {
    const c = parse(['--store', 'etcd', '--etcd-endpoints', 'http://127.0.82.1:19201, http://127.0.82.2:19201/', '--etcd-prefix', 'cloud-a/', '--etcd-timeout-ms', '2000']);
    expect(c.store).toBe('etcd');
    expect(c.etcdEndpoints).toEqual(['http://127.0.82.1:19201', 'http://127.0.82.2:19201']);
    expect(c.etcdPrefix).toBe('cloud-a/');
    expect(c.etcdTimeoutMs).toBe(2000);
  });

  it.each([
    [['--store', 'etcd'], /--etcd-endpoints: is required with --store etcd/],
    [['--etcd-endpoints', 'http://127.0.0.1:2379'], /--etcd-endpoints: needs --store etcd/],
    [['--store', 'zookeeper'], /--store: must be file or etcd/],
    [['--store', 'etcd', '--etcd-endpoints', 'https://127.0.0.1:2379'], /only http:\/\//],
    [['--store', 'etcd', '--etcd-endpoints', 'http://127.0.0.1'], /must be http:\/\/host:port/],
    [['--store', 'etcd', '--etcd-endpoints', ','], /at least one/],
    [['--store', 'etcd', '--etcd-endpoints', 'http://127.0.0.1:2379', '--etcd-prefix', 'no-slash'], /--etcd-prefix: must .* end with \//],
    [['--store', 'etcd', '--etcd-endpoints', 'http://127.0.0.1:2379', '--etcd-max-txn-ops', '2'], /--etcd-max-txn-ops: must be at least 8/],
  ])('refuses %j, naming the flag', (argv, message) => {
    const found = problems(() => parse(argv));
    expect(found.join('\n')).toMatch(message);
  });
});
