/**
 * Thousands of simulated hosts for a real CC and CLC (bench/supervisionCase.ts, the scale-mode
 * test): their addresses, their certificates from the cloud CA, and the scale-mode processes
 * (nc/scale/main.ts) that run them, driven over stdin ("fail <host> ...", "revive <host> ..."). Each host gets a
 * certificate of its own (CN and the one IP subjectAltName = its address, OU=nc), as ferry-init
 * issues them, so the CC's checks of a node's certificate (the CA, the address in the URL) and
 * the NC's checks of the CC's hold unchanged; the simulated hosts share one key pair, since
 * 10,000 RSA key pairs would take minutes to generate and no check looks at the key.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { generateRsaKeys } from '../shared/pki/certificates.js';
import { initCloudPki, RANDOM_PKI_SOURCES } from '../shared/pki/pkiFiles.js';
import { buildCloudPkiSpec } from '../shared/pki/spec.js';
import { BMC_STORE_OPTIONS, fenceConfigFor, type BmcEntry } from '../clc/ha/power/bmcStore.js';
import { CLOUD_ID, ensureCloudPki } from './cloudLayout.js';
import { daemonCommand, openLogFile, stopPid } from './daemon.js';

/** `count` addresses 127.64.X.Y (X from `firstBlock`, Y 1-254): one per simulated host. */
export function scaleHosts(count: number, firstBlock = 0): string[] {
  return Array.from({ length: count }, (_, i) => `127.64.${firstBlock + Math.floor(i / 254)}.${(i % 254) + 1}`);
}

/** The cloud PKI in `<baseDir>/certs` for a controller at `controllerHost` and the simulated hosts (existing files kept). */
export function ensureScalePki(baseDir: string, controllerHost: string, hosts: readonly string[]): void {
  ensureCloudPki({ baseDir, controllerHost, nodeHosts: [] });
  const shared = generateRsaKeys();
  initCloudPki({
    dir: join(baseDir, 'certs'), spec: buildCloudPkiSpec({ cloudId: CLOUD_ID, cc: [], nc: [hosts.join(',')] }), force: false, rotateCa: false,
    now: new Date(), newKeys: () => shared, newSerial: RANDOM_PKI_SOURCES.newSerial,
  });
}

/**
 * Writes `<clcStateDir>/bmc.json` before the CLC starts: a BMC entry per host (ConfigureHAForHost's
 * settings, validated the same way), naming a fence agent that is not installed, so a power action
 * that HA would start fails rather than touching anything; the storm guard must keep it from starting.
 */
export function seedBmcStore(clcStateDir: string, hosts: readonly string[], agent = 'fence_ferry_bench_absent'): void {
  const entries: Record<string, BmcEntry> = {};
  for (const h of hosts) {
    const entry: BmcEntry = { agent, options: { ip: h }, password: '', timeoutMs: 5000 };
    fenceConfigFor(h, entry);
    entries[h] = entry;
  }
  const envelope = { schemaVersion: BMC_STORE_OPTIONS.schemaVersion, kind: BMC_STORE_OPTIONS.kind, data: { hosts: entries, remediationSecrets: {} } };
  writeFileSync(join(clcStateDir, 'bmc.json'), JSON.stringify(envelope), { mode: 0o600 });
}

export interface ScaleProcessOptions {
  readonly root: string;
  readonly baseDir: string;
  readonly name: string;
  readonly hosts: readonly string[];
  readonly port: number;
  readonly ccUrl: string;
  readonly storageDir: string;
  readonly readyTimeoutMs?: number;
  readonly extraArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

export interface ScaleProcess {
  readonly pid: number;
  readonly hosts: readonly string[];
  /** Fails these hosts at once; resolves with the time (epoch ms) just before the first one closed. */
  fail(hosts: readonly string[]): Promise<number>;
  /** Boots these failed hosts again, empty; resolves with the time (epoch ms) the command was taken, once all serve. */
  revive(hosts: readonly string[]): Promise<number>;
  stop(): Promise<void>;
}

/** Starts one scale-mode process (soft open-file limit raised to the hard one) and waits until every host serves. */
export async function startScaleProcess(o: ScaleProcessOptions): Promise<ScaleProcess> {
  const hostsFile = join(o.baseDir, `${o.name}.hosts`);
  writeFileSync(hostsFile, `${o.hosts.join('\n')}\n`);
  const args = ['--hosts-file', hostsFile, '--tls-dir', join(o.baseDir, 'certs'), '--cc-url', o.ccUrl, '--storage-dir', o.storageDir, '--port', String(o.port), ...(o.extraArgs ?? [])];
  const [command, argv] = daemonCommand(resolve(o.root, 'dist/nc/scale/main.js'), args, true);
  const log = openLogFile(join(o.baseDir, 'logs', `${o.name}.log`));
  const child: ChildProcess = spawn(command, argv, { cwd: o.root, stdio: ['pipe', 'pipe', log], env: { ...process.env, ...o.env } });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => boolean)[] = [];
  lines.on('line', (line) => {
    const i = waiting.findIndex((w) => w(line));
    if (i >= 0) waiting.splice(i, 1);
  });
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exited with ${code ?? signal}`;
  });
  const next = (match: RegExp, timeoutMs: number): Promise<RegExpExecArray> => new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${o.name}: no "${match.source}" within ${timeoutMs} ms (${exited ?? 'running'}); see ${o.name}.log`)), timeoutMs);
    // Bench and test tooling: these errors go to the developer's terminal, never to a client.
    child.once('exit', () => { clearTimeout(timer); rej(new Error(`${o.name} ${exited ?? 'exited'}; see ${o.name}.log`)); });
    waiting.push((line) => {
      const m = match.exec(line);
      if (!m) return false;
      clearTimeout(timer);
      res(m);
      return true;
    });
  });
  await next(/^scale listening on (\d+) hosts$/, o.readyTimeoutMs ?? 300_000);
  if (child.pid === undefined) throw new Error(`${o.name} has no pid`); // spawn's invariant after a ready line
  const pid = child.pid;
  /** One command on stdin; its answer (`<done> <count> at <ms>`) or its refusal (`error ...`). */
  const send = async (verb: string, done: string, hosts: readonly string[]): Promise<number> => {
    const answer = next(new RegExp(`^(?:${done} (\\d+) at (\\d+)|error (.*))$`), 120_000);
    child.stdin!.write(`${verb} ${hosts.join(' ')}\n`);
    const m = await answer;
    if (m[3] !== undefined) throw new Error(`${o.name}: ${m[3]}`);
    return Number(m[2]);
  };
  return {
    pid, hosts: o.hosts,
    fail: (hosts) => send('fail', 'failed', hosts),
    revive: (hosts) => send('revive', 'revived', hosts),
    async stop() {
      child.stdin!.end();
      await stopPid(pid, 20_000);
    },
  };
}
