import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../shared/config/compileConfig.js';
import { parseHeartbeatConfig } from '../../../../nc/ha/heartbeat/config.js';

describe('ferry-heartbeat flags', () => {
  it('fills the defaults and makes directories absolute', () => {
    expect(parseHeartbeatConfig(['--host', '127.0.1.1', '--storage-dir', 'shared'], {})).toEqual({
      host: '127.0.1.1', storageDir: `${process.cwd()}/shared`, libvirtRunDir: '/run/libvirt', intervalMs: 2000,
    });
  });

  it('takes the environment when a flag is absent', () => {
    expect(parseHeartbeatConfig([], { FERRY_HEARTBEAT_HOST: 'h1', FERRY_HEARTBEAT_STORAGE_DIR: '/s', FERRY_HEARTBEAT_INTERVAL_MS: '500' }))
      .toMatchObject({ host: 'h1', storageDir: '/s', intervalMs: 500 });
  });

  it.each([
    ['no host or storage', [], ['--host', '--storage-dir']],
    ['a host that is a path', ['--host', '../x', '--storage-dir', '/s'], ['--host']],
    ['an interval out of bounds', ['--host', 'h', '--storage-dir', '/s', '--interval-ms', '5'], ['--interval-ms']],
  ])('refuses %s, naming each bad flag', (_, argv, flags) => {
    let err: unknown;
    try {
      parseHeartbeatConfig(argv, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    for (const f of flags) expect((err as ConfigError).problems.some((p) => p.startsWith(f))).toBe(true);
  });
});
