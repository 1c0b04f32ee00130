/**
 * The deployment files (deploy/) against the daemons' real parsers: the image's entry point, every
 * systemd unit's ExecStart= with its EnvironmentFile=, every compose service's command line and every
 * config file go through the same flag and config compilers the daemons run, so a renamed or removed
 * flag or variable fails here. The units also pass `systemd-analyze verify` (unknown keys included).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseCcConfig } from '../../cc/config.js';
import { parseClcConfig } from '../../clc/config.js';
import { parseHeartbeatConfig } from '../../nc/ha/heartbeat/config.js';
import { parseNcConfig } from '../../nc/config.js';
import { compileSimHvConfig } from '../../nc/hypervisor/sim/config.js';
import { parseSimHvFlags } from '../../nc/hypervisor/sim/flags.js';
import { composeServices, interpolate, loadComposeFile, podmanRunArgs, startOrder } from '../../scripts/composeFile.js';
import { ConfigError } from '../../shared/config/compileConfig.js';
import { ROOT } from '../helpers/cloud.js';

const run = promisify(execFile);
type Env = Record<string, string>;

/** Each tier's real parser: throws ConfigError (or CommanderError for simhv) on anything it refuses. */
const PARSERS: Readonly<Record<string, ((argv: string[], env: Env) => unknown) | undefined>> = {
  clc: (argv, env) => parseClcConfig(argv, env),
  cc: (argv, env) => parseCcConfig(argv, env),
  nc: (argv, env) => parseNcConfig(argv, env),
  simhv: (argv, env) => compileSimHvConfig(parseSimHvFlags(argv, env)),
  heartbeat: (argv, env) => parseHeartbeatConfig(argv, env),
  // ferry-init: a tool run by hand, not a daemon with a config file; its --help run is checked below.
  init: undefined,
};

/** The variables' prefix of each daemon (shared/config/unknownSettings.ts). */
const PREFIX: Readonly<Record<string, string>> = { clc: 'FERRY_CLC_', cc: 'FERRY_CC_', nc: 'FERRY_NC_', simhv: 'SIMHV_', heartbeat: 'FERRY_HEARTBEAT_' };

function problemsOf(f: () => unknown): string[] {
  try {
    f();
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    if (e instanceof CommanderError) return [e.message];
    if (e instanceof Error && e.name === 'SimHvConfigError') return [e.message];
    throw e;
  }
}

/** `ferry TIER` → entry file, from the entry point script's case table. */
function entryTable(): Map<string, string> {
  const script = readFileSync(join(ROOT, 'deploy/ferry-entrypoint.sh'), 'utf8');
  return new Map([...script.matchAll(/^\s+([a-z]+)\) entry=(\S+) ;;$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/** A systemd EnvironmentFile= / podman --env-file: KEY=value lines; '#' comments. No quotes: the two read them differently. */
function readEnvFile(file: string): Env {
  const env: Env = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = /^([A-Z][A-Z0-9_]*)=(\S*)$/.exec(line);
    if (m === null) throw new Error(`${file}: not KEY=value without spaces or quotes: ${line}`);
    env[m[1] ?? ''] = m[2] ?? '';
  }
  return env;
}

/** The variables a daemon's --help lists ([env NAME] or [env: NAME]), from a real run of the entry point. */
async function helpVariables(tier: string): Promise<string[]> {
  const { stdout } = await run(join(ROOT, 'deploy/ferry-entrypoint.sh'), [tier, '--help'], { env: { ...process.env, FERRY_HOME: ROOT } });
  return [...stdout.matchAll(/\[env:?\s+([A-Z0-9_]+)\]/g)].map((m) => m[1] ?? '');
}

interface Unit { readonly file: string; readonly execStart: string[]; readonly environmentFiles: string[] }

function readUnit(file: string, instance: string): Unit {
  const text = readFileSync(file, 'utf8').replace(/%i/g, instance);
  const values = (key: string): string[] => [...text.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => (m[1] ?? '').trim());
  const exec = values('ExecStart');
  expect(exec, `${file}: one ExecStart=`).toHaveLength(1);
  return { file, execStart: (exec[0] ?? '').split(/\s+/), environmentFiles: values('EnvironmentFile') };
}

const UNIT_DIR = join(ROOT, 'deploy/systemd');
const CONFIG_DIR = join(ROOT, 'deploy/config');
const unitFiles = readdirSync(UNIT_DIR).filter((f) => f.endsWith('.service'));

/** /etc/ferry/cc-cluster01.conf → deploy/config/cc.conf: the shipped example of an installed file. */
function exampleOf(installed: string, instance: string): string {
  return join(CONFIG_DIR, basename(installed).replace(`-${instance}.conf`, '.conf'));
}

describe('the entry point (deploy/ferry-entrypoint.sh)', () => {
  it('maps every tier to a built entry file, and every tier has its parser here', () => {
    const table = entryTable();
    expect([...table.keys()].sort()).toEqual(Object.keys(PARSERS).sort());
    for (const entry of table.values()) expect(existsSync(join(ROOT, entry)), entry).toBe(true);
  });

  it('runs each tier: --help exits 0 and lists that tier\'s flags; an unknown tier exits 2', async () => {
    const names: Record<string, string> = { clc: 'ferry-clc', cc: 'ferry-cc', nc: 'ferry-nc', simhv: 'simhv', heartbeat: 'ferry-heartbeat', init: 'ferry-init' };
    for (const [tier, name] of Object.entries(names)) {
      const { stdout } = await run(join(ROOT, 'deploy/ferry-entrypoint.sh'), [tier, '--help'], { env: { ...process.env, FERRY_HOME: ROOT } });
      expect(stdout, tier).toContain(`Usage: ${name}`);
    }
    const bad = await run(join(ROOT, 'deploy/ferry-entrypoint.sh'), ['bogus'], { env: { ...process.env, FERRY_HOME: ROOT } }).then(() => 0, (e: { code: number }) => e.code);
    expect(bad).toBe(2);
  });
});

describe('config files (deploy/config/*.conf)', () => {
  const daemons = ['clc', 'cc', 'nc', 'simhv', 'heartbeat'] as const;

  it('ship one per daemon, and nothing else', () => {
    expect(readdirSync(CONFIG_DIR).sort()).toEqual(daemons.map((d) => `${d}.conf`).sort());
  });

  for (const tier of daemons) {
    it(`${tier}.conf compiles through the daemon's parser, uses only its variables, and documents every one`, async () => {
      const file = join(CONFIG_DIR, `${tier}.conf`);
      const env = readEnvFile(file);
      expect(Object.keys(env).length).toBeGreaterThan(0);
      for (const k of Object.keys(env)) expect(k.startsWith(PREFIX[tier] ?? '?'), k).toBe(true);
      expect(problemsOf(() => PARSERS[tier]?.([], env))).toEqual([]);
      const text = readFileSync(file, 'utf8');
      const vars = await helpVariables(tier);
      expect(vars.length).toBeGreaterThan(3);
      for (const v of vars) expect(text, `${tier}.conf should show ${v}`).toMatch(new RegExp(`^#?${v}=`, 'm'));
    });

    it(`${tier}: a misspelt key in its config file is refused, naming it`, () => {
      const env = { ...readEnvFile(join(CONFIG_DIR, `${tier}.conf`)), [`${PREFIX[tier] ?? ''}STAET_DIR`]: '/x' };
      const problems = problemsOf(() => PARSERS[tier]?.([], env));
      expect(problems.join('\n')).toContain(`${PREFIX[tier] ?? ''}STAET_DIR`);
    });
  }
});

describe('systemd units (deploy/systemd)', () => {
  it('ship the CLC, CC (per partition), NC, simulated hypervisor and heartbeat units', () => {
    expect(unitFiles.sort()).toEqual(['ferry-cc@.service', 'ferry-clc.service', 'ferry-heartbeat.service', 'ferry-nc.service', 'ferry-simhv.service']);
  });

  for (const f of unitFiles) {
    it(`${f}: ExecStart= runs the entry point with flags its daemon accepts, over its EnvironmentFile=`, () => {
      const instance = 'cluster01';
      const unit = readUnit(join(UNIT_DIR, f), instance);
      const [bin, tier = '', ...flags] = unit.execStart;
      expect(bin).toBe('/usr/local/bin/ferry');
      expect(entryTable().has(tier), tier).toBe(true);
      expect(unit.environmentFiles).toHaveLength(1);
      const example = exampleOf(unit.environmentFiles[0] ?? '', instance);
      expect(basename(example)).toBe(`${tier}.conf`);
      const parse = PARSERS[tier];
      expect(parse).toBeDefined();
      expect(problemsOf(() => parse?.(flags, readEnvFile(example)))).toEqual([]);
    });
  }

  it('pass systemd-analyze verify with no warning (unknown keys, bad values, missing commands)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ferry-units-'));
    try {
      // A root with systemd's own units (the targets ours name), ours, and the entry point they run.
      mkdirSync(join(root, 'usr/lib/systemd'), { recursive: true });
      cpSync('/lib/systemd/system', join(root, 'usr/lib/systemd/system'), { recursive: true });
      cpSync(UNIT_DIR, join(root, 'etc/systemd/system'), { recursive: true });
      mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
      cpSync(join(ROOT, 'deploy/ferry-entrypoint.sh'), join(root, 'usr/local/bin/ferry'));
      const units = unitFiles.map((u) => u.replace('@.service', '@cluster01.service'));
      const r = await run('systemd-analyze', ['verify', `--root=${root}`, '--man=no', ...units]).then(
        (o) => ({ code: 0, stderr: o.stderr }), (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }));
      expect(r).toEqual({ code: 0, stderr: '' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the compose file (deploy/compose.yaml)', () => {
  const file = join(ROOT, 'deploy/compose.yaml');
  const testEnv = {
    FERRY_COMPOSE_CONTROLLER: '127.0.79.1', FERRY_COMPOSE_NC1: '127.0.79.11', FERRY_COMPOSE_NC2: '127.0.79.12',
    FERRY_COMPOSE_CLC_PORT: '18973', FERRY_COMPOSE_CC_PORT: '18974', FERRY_COMPOSE_NC_PORT: '18975', FERRY_COMPOSE_SIMHV_TLS_PORT: '18914',
  };

  for (const [what, env] of [['defaults', {}], ['the integration test\'s addresses', testEnv]] as const) {
    it(`every service's command is accepted by its daemon's parser (${what})`, () => {
      const services = loadComposeFile(file, env);
      expect(services.map((s) => s.name).sort()).toEqual(['cc', 'clc', 'nc-1', 'nc-2', 'simhv-1', 'simhv-2']);
      for (const s of services) {
        const [tier = '', ...flags] = s.command;
        expect(entryTable().has(tier), `${s.name}: ${tier}`).toBe(true);
        expect(problemsOf(() => PARSERS[tier]?.(flags, {})), s.name).toEqual([]);
        expect(s.networkMode).toBe('host');
        expect(s.command.join(' ')).not.toContain('${');
      }
    });
  }

  it('starts each host\'s hypervisor before its NC, the NCs before the CC, the CC before the CLC', () => {
    const order = startOrder(loadComposeFile(file, {})).map((s) => s.name);
    const at = (n: string): number => order.indexOf(n);
    expect(at('simhv-1')).toBeLessThan(at('nc-1'));
    expect(at('simhv-2')).toBeLessThan(at('nc-2'));
    expect(Math.max(at('nc-1'), at('nc-2'))).toBeLessThan(at('cc'));
    expect(at('cc')).toBeLessThan(at('clc'));
  });

  it('points each NC at its own simhv socket and the CC at both NCs', () => {
    const byName = new Map(loadComposeFile(file, testEnv).map((s) => [s.name, s]));
    const flag = (svc: string, f: string): string | undefined => {
      const c = byName.get(svc)?.command ?? [];
      return c[c.indexOf(f) + 1];
    };
    expect(flag('nc-1', '--sim-socket')).toBe(flag('simhv-1', '--socket'));
    expect(flag('nc-2', '--sim-socket')).toBe(flag('simhv-2', '--socket'));
    expect(flag('cc', '--nodes')).toBe('127.0.79.11,127.0.79.12');
    expect(flag('clc', '--clusters')).toBe('cluster01=https://127.0.79.1:18974');
  });
});

describe('composeFile', () => {
  it.each([
    ['${A}', { A: 'x' }, 'x'],
    ['${A:-d}', {}, 'd'],
    ['${A:-d}', { A: '' }, 'd'],
    ['${A:-d}', { A: 'x' }, 'x'],
    ['${A}', {}, ''],
    ['a$$b', {}, 'a$b'],
    ['https://{host}:${P:-16514}', { P: '18914' }, 'https://{host}:18914'],
  ])('interpolate(%s, %j) = %s', (s, env, want) => {
    expect(interpolate(s, env)).toBe(want);
  });

  it('refuses a depends_on cycle and an unknown dependency', () => {
    const svc = (name: string, deps: string[]) => ({ image: 'i', depends_on: deps, command: [name] });
    expect(() => startOrder(composeServices({ services: { a: svc('a', ['b']), b: svc('b', ['a']) } }, {}, '/'))).toThrow(/cycle/);
    expect(() => startOrder(composeServices({ services: { a: svc('a', ['zz']) } }, {}, '/'))).toThrow(/unknown service zz/);
  });

  it('makes relative volume sources absolute against the compose file\'s directory, and builds podman run arguments', () => {
    const [s] = composeServices({ services: { clc: { image: 'img', network_mode: 'host', volumes: ['./data:/var/lib/ferry', '/abs:/x:ro'], command: ['clc', '--port', '1'] } } }, {}, '/srv/deploy');
    expect(s?.volumes).toEqual(['/srv/deploy/data:/var/lib/ferry', '/abs:/x:ro']);
    expect(podmanRunArgs('p', s!)).toEqual(['run', '-d', '--name', 'p_clc_1', '--label', 'io.podman.compose.project=p', '--label', 'com.docker.compose.service=clc',
      '--network', 'host', '-v', '/srv/deploy/data:/var/lib/ferry', '-v', '/abs:/x:ro', 'img', 'clc', '--port', '1']);
  });
});

