/**
 * deploy/compose.yaml as data: the services' images, command lines, volumes and start order, with
 * `${VAR:-default}` filled in from an environment. Used by scripts/deploy-compose.ts (which runs the
 * file with `podman run`: Debian's podman-compose 1.0.3 adds a bridge network to every container,
 * which podman refuses beside `network_mode: host`) and by test/deploy/deployFiles.test.ts (which checks
 * every command line against the daemons' real flag parsers). The YAML is read by Debian's
 * python3-yaml, so Ferry needs no YAML package of its own.
 */
import { execFileSync } from 'node:child_process';
import { dirname, isAbsolute, resolve } from 'node:path';

export interface ComposeService {
  readonly name: string;
  readonly image: string;
  /** argv after the image: the entry point's arguments (`ferry TIER FLAGS...`). */
  readonly command: readonly string[];
  /** `SOURCE:TARGET[:ro]`, SOURCE made absolute against the compose file's directory. */
  readonly volumes: readonly string[];
  readonly networkMode: string | undefined;
  readonly restart: string | undefined;
  readonly stopSignal: string | undefined;
  readonly dependsOn: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** `${VAR}`, `${VAR:-default}` (default when unset or empty) and `$$`, as compose does. */
export function interpolate(s: string, env: Env): string {
  return s.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, name: string | undefined, dflt: string | undefined) => {
    if (whole === '$$') return '$';
    const v = env[name ?? ''];
    return v !== undefined && v !== '' ? v : (dflt ?? '');
  });
}

function strings(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || typeof x === 'number')) throw new Error(`${what}: expected a list of strings`);
  return v.map(String);
}

/** The services of a parsed compose document (plain JSON), interpolated with `env`. */
export function composeServices(doc: unknown, env: Env, composeDir: string): ComposeService[] {
  const services = (doc as { services?: Record<string, Record<string, unknown>> } | null)?.services;
  if (services === undefined || typeof services !== 'object') throw new Error('compose file: no services');
  return Object.entries(services).map(([name, s]) => {
    const str = (k: string): string | undefined => (typeof s[k] === 'string' ? interpolate(s[k], env) : undefined);
    const image = str('image');
    if (image === undefined) throw new Error(`service ${name}: no image`);
    const volumes = strings(s.volumes, `service ${name} volumes`).map((v) => {
      const [src = '', ...rest] = interpolate(v, env).split(':');
      return [isAbsolute(src) ? src : resolve(composeDir, src), ...rest].join(':');
    });
    return {
      name, image, volumes,
      command: strings(s.command, `service ${name} command`).map((a) => interpolate(a, env)),
      networkMode: str('network_mode'), restart: str('restart'), stopSignal: str('stop_signal'),
      dependsOn: strings(s.depends_on, `service ${name} depends_on`),
    };
  });
}

/** Services in an order where each comes after what it depends on; throws on a cycle or an unknown name. */
export function startOrder(services: readonly ComposeService[]): ComposeService[] {
  const byName = new Map(services.map((s) => [s.name, s]));
  const out: ComposeService[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (s: ComposeService): void => {
    if (state.get(s.name) === 'done') return;
    if (state.get(s.name) === 'visiting') throw new Error(`compose file: depends_on cycle through ${s.name}`);
    state.set(s.name, 'visiting');
    for (const d of s.dependsOn) {
      const dep = byName.get(d);
      if (dep === undefined) throw new Error(`service ${s.name} depends on unknown service ${d}`);
      visit(dep);
    }
    state.set(s.name, 'done');
    out.push(s);
  };
  for (const s of services) visit(s);
  return out;
}

/** The label every container of a project carries, as podman-compose sets it. */
export const PROJECT_LABEL = 'io.podman.compose.project';

/** `podman run` arguments for one service of `project`, detached. */
export function podmanRunArgs(project: string, s: ComposeService): string[] {
  return [
    'run', '-d', '--name', `${project}_${s.name}_1`, '--label', `${PROJECT_LABEL}=${project}`, '--label', `com.docker.compose.service=${s.name}`,
    ...(s.networkMode !== undefined ? ['--network', s.networkMode] : []),
    ...(s.restart !== undefined ? ['--restart', s.restart] : []),
    ...(s.stopSignal !== undefined ? ['--stop-signal', s.stopSignal] : []),
    ...s.volumes.flatMap((v) => ['-v', v]),
    s.image, ...s.command,
  ];
}

/** Reads a compose file (YAML, through python3-yaml) into its services. */
export function loadComposeFile(file: string, env: Env): ComposeService[] {
  const json = execFileSync('python3', ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)', file], { encoding: 'utf8' });
  return composeServices(JSON.parse(json), env, dirname(resolve(file)));
}
