/**
 * A whole cloud of real processes for integration tests, on its own loopback /24 (127.0.X.0):
 * controllers at 127.0.X.254, hosts at 127.0.X.1..n. Its tiers talk mutual TLS with a cloud PKI in
 * its temp dir (certs/), as the layout says. Stops everything it started, by PID.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import xml2js from 'xml2js';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import {
  ccUrl, certsDirOf, cloudLayout, clcUrl, ensureCloudPki, ncUrl, simSocketOf, type CloudLayoutOptions, type ProcessSpec,
} from '../../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import type { PeerRole } from '../../shared/pki/spec.js';
import type { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { tierClient } from './tierClient.js';

export const ROOT = resolve(import.meta.dirname, '..', '..');

export interface QueryResult {
  readonly status: number;
  readonly text: string;
  /** The response parsed with xml2js (explicitArray false). */
  readonly doc: Record<string, unknown>;
}

export class TestCloud {
  readonly baseDir: string;
  readonly controller: string;
  readonly nodeHosts: string[];
  readonly url: string;
  /** The cloud PKI (ca.pem, <role>-<host>.pem/.key) the daemons were started with. */
  readonly certsDir: string;
  /** The CC's wire endpoint (https://). */
  readonly ccUrl: string;
  private readonly layout: CloudLayoutOptions;
  private readonly specs: ProcessSpec[];
  private readonly running = new Map<string, RunningDaemon>();
  /** Set by destroy(): a start still under way (a timed-out hook) stops what it starts. */
  private destroyed = false;
  private readonly clients: HttpWireTransport[] = [];

  /** `extra` may depend on the cloud's directory (e.g. flags naming its shared storage). */
  constructor(subnet: number, nodes: number, extra: Partial<CloudLayoutOptions> | ((baseDir: string) => Partial<CloudLayoutOptions>) = {}) {
    this.baseDir = mkdtempSync(join(tmpdir(), `ferry-cloud-${subnet}-`));
    this.controller = `127.0.${subnet}.254`;
    this.nodeHosts = Array.from({ length: nodes }, (_, i) => `127.0.${subnet}.${i + 1}`);
    this.layout = { baseDir: this.baseDir, controllerHost: this.controller, nodeHosts: this.nodeHosts, ...(typeof extra === 'function' ? extra(this.baseDir) : extra) };
    ensureCloudPki(this.layout);
    this.specs = cloudLayout(this.layout);
    this.url = clcUrl(this.controller);
    this.certsDir = certsDirOf(this.layout);
    this.ccUrl = ccUrl(this.layout);
  }

  ncUrl(host: string): string {
    return ncUrl(this.layout, host);
  }

  /** Host `host`'s simhv control socket (owner-only: this test process runs as its owner). */
  simSocket(host: string): string {
    return simSocketOf(this.layout, host);
  }

  /**
   * A wire client presenting `role`'s certificate (the CLC's by default, or an NC's for `host`):
   * what a test uses to dial the CC or an NC directly. Closed by destroy().
   */
  tierClient(path: string, role: PeerRole = 'clc', host: string = role === 'nc' ? (this.nodeHosts[0] ?? '') : this.controller): HttpWireTransport {
    const t = tierClient({ certsDir: this.certsDir, role, host, path });
    this.clients.push(t);
    return t;
  }

  /** How a process of this cloud is started (for a test that runs it itself, e.g. behind a lab BMC). */
  spec(name: string): ProcessSpec {
    const spec = this.specs.find((s) => s.name === name);
    if (!spec) throw new Error(`no process ${name}`);
    return spec;
  }

  names(): string[] {
    return this.specs.map((s) => s.name);
  }

  async start(names: readonly string[] = this.names()): Promise<void> {
    for (const name of names) {
      const spec = this.specs.find((s) => s.name === name);
      if (!spec) throw new Error(`no process ${name}`);
      if (this.destroyed) throw new Error(`test cloud destroyed before ${name} started`);
      const d = await spawnDaemon(spec, { root: ROOT, logFile: join(this.baseDir, 'logs', `${name}.log`) });
      // A hook that timed out runs afterAll while this start goes on: what it starts late is stopped, not leaked.
      if (this.destroyed) {
        await stopPid(d.pid);
        throw new Error(`test cloud destroyed while ${name} started`);
      }
      this.running.set(name, d);
    }
  }

  /** What a process wrote on stdout and stderr (its log file), across restarts. */
  log(name: string): string {
    return readFileSync(join(this.baseDir, 'logs', `${name}.log`), 'utf8');
  }

  pid(name: string): number | undefined {
    return this.running.get(name)?.pid;
  }

  /** kill -9 one process (a crash: no shutdown code runs). */
  async crash(name: string): Promise<void> {
    const d = this.running.get(name);
    if (!d) return;
    await stopPid(d.pid, 0, 'SIGKILL');
    this.running.delete(name);
  }

  async restart(name: string): Promise<void> {
    await this.crash(name);
    await this.start([name]);
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.running.keys()].reverse()) {
      const d = this.running.get(name);
      if (d) await stopPid(d.pid);
      this.running.delete(name);
    }
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const t of this.clients.splice(0)) t.close();
    await this.stopAll();
    // FERRY_TEST_KEEP=1 keeps the daemons' state and logs for a look after a failure.
    if (process.env.FERRY_TEST_KEEP === '1') console.log(`kept ${this.baseDir}`);
    else rmSync(this.baseDir, { recursive: true, force: true });
  }

  /** The admin credentials file the CLC writes at its first start. */
  credentialsFile(): string {
    return join(this.baseDir, 'clc', 'admin.credentials');
  }

  private credentials: Credentials | undefined;

  /** One AWS-Query request to the CLC, signed (SigV4) with the admin credentials, as the CLI does. */
  async query(params: Record<string, string>): Promise<QueryResult> {
    this.credentials ??= await readCredentialsFile(this.credentialsFile());
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...this.credentials, url: this.url, now: Date.now() });
    const res = await fetch(this.url, { method: 'POST', headers: signed.headers, body: signed.body });
    const text = await res.text();
    const doc = (await xml2js.parseStringPromise(text, { explicitArray: false })) as Record<string, unknown>;
    return { status: res.status, text, doc };
  }

  /** The CLI's environment for this cloud. */
  cliEnv(): NodeJS.ProcessEnv {
    return { ...process.env, EC2_URL: this.url, FERRY_CREDENTIALS: this.credentialsFile(), EC2_ACCESS_KEY: undefined, EC2_SECRET_KEY: undefined };
  }
}

const execFileAsync = promisify(execFile);

/** Runs `bin/<cmd>` against `cloud` as an administrator would; a non-zero exit is a result, not a throw. */
export async function cloudCli(cloud: TestCloud, cmd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileAsync(process.execPath, [join(ROOT, 'bin', cmd), ...args], { env: cloud.cliEnv() });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
