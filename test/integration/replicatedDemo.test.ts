/**
 * The replicated demo end to end (issue 21: "a documented command starts a replicated demo and shows a
 * leader change during a drain without a lost or duplicated instance"): scripts/demoReplicated.ts (what
 * `scripts/demo.sh replicated` runs after building) moved onto this test's own loopback addresses and
 * ports by its environment variables: the cloud on 127.0.103.0/24, etcd on 127.0.104.1-3, ports
 * 20100-20131. `start`, then `failover` (exit 0, a new CLC and CC leader named, every instance on
 * exactly one host), the Eucalyptus 4 admin tools' reading of DescribeServices with replicas (leaders
 * ENABLED, standbys DISABLED), then `stop`, which must leave none of the processes it recorded alive.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, stopPid } from '../../scripts/daemon.js';
import { etcdInstalled } from '../../scripts/etcdCluster.js';
import { readCredentialsFile } from '../../shared/auth/credentialsFile.js';
import { adminBootstrap, adminEc2, EUCALYPTUS_ADMIN_USER_AGENT, EucalyptusAdmin, serviceRows } from '../clients/eucaCommands.js';
import { RequestbuilderSession } from '../clients/requestbuilder.js';
import { ROOT } from '../helpers/cloud.js';
import { until } from '../helpers/clcReplicas.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'ferry-repdemo-'));
const NODES = ['127.0.103.1', '127.0.103.2', '127.0.103.3'];
const env = {
  ...process.env,
  FERRY_REPDEMO_DIR: dir, FERRY_REPDEMO_CONTROLLER: '127.0.103.254', FERRY_REPDEMO_NODES: NODES.join(','),
  FERRY_REPDEMO_ETCD: '127.0.104.1,127.0.104.2,127.0.104.3', FERRY_REPDEMO_PORT_BASE: '20100',
};

/** One demo command; its exit status and output, whatever the status. */
async function demo(cmd: string, timeoutMs: number): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [join(ROOT, 'dist', 'scripts', 'demoReplicated.js'), cmd], { env, timeout: timeoutMs, maxBuffer: 4 << 20 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` };
  }
}

/** Every PID the demo recorded: its daemons' and etcd-lab.sh's members'. */
function recordedPids(): number[] {
  const files = [join(dir, 'run'), join(dir, 'etcd')].flatMap((d) => (existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.pid')).map((f) => join(d, f)) : []));
  return files.map((f) => Number(readFileSync(f, 'utf8'))).filter((p) => Number.isInteger(p) && p > 0);
}

describe.skipIf(!etcdInstalled())('the replicated demo: start, failover during a drain, stop', () => {
  let started: { code: number; out: string };

  beforeAll(async () => {
    started = await demo('start', 400_000);
  }, 420_000);

  afterAll(async () => {
    const left = recordedPids();
    const stopped = await demo('stop', 120_000);
    // A stop that failed must not leak the demo's processes into the next test: each by its recorded PID.
    if (stopped.code !== 0) for (const p of left) if (isAlive(p)) await stopPid(p, 2000);
    rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  it('start brings up etcd, 3 CLC and 2 CC replicas and 6 instances, and names the leaders', () => {
    expect(started.code, started.out).toBe(0);
    expect(started.out).toContain('etcd lab: 3 member(s) up');
    expect(started.out).toContain('started 6 demo instances');
    expect(started.out).toMatch(/CLC replicas http:\/\/127\.0\.103\.254:20100, http:\/\/127\.0\.103\.254:20101, http:\/\/127\.0\.103\.254:20102 \(leader http:\/\/127\.0\.103\.254:2010[0-2]\)/);
    expect(started.out).toMatch(/CC replicas https:\/\/127\.0\.103\.254:20110, https:\/\/127\.0\.103\.254:20111 \(leader https:\/\/127\.0\.103\.254:2011[01]\)/);
    // 3 simhv + 3 NC + 2 CC + 3 CLC daemons and 3 etcd members, each recorded.
    expect(recordedPids()).toHaveLength(14);
  });

  it('failover: both leaders killed mid-drain, others take over, the drain completes, every instance runs exactly once', async () => {
    const r = await demo('failover', 500_000);
    expect(r.code, r.out).toBe(0);
    const before = /Leaders: CLC (clc-[abc]) \(\S+\), CC (cc-[ab])/.exec(r.out);
    const clcAfter = /CLC: (clc-[abc]) \(\S+\) leads, serving changes [\d.]+ s after the kill/.exec(r.out);
    const ccAfter = /CC: {2}(cc-[ab]) \(\S+\) leads, named by DescribeServices/.exec(r.out);
    expect(before, r.out).not.toBeNull();
    expect(clcAfter, r.out).not.toBeNull();
    expect(ccAfter, r.out).not.toBeNull();
    expect(clcAfter?.[1]).not.toBe(before?.[1]);
    expect(ccAfter?.[1]).not.toBe(before?.[2]);
    expect(r.out).toMatch(/mig-[0-9a-f]{8} is active\n/);
    expect(r.out).toMatch(/mig-[0-9a-f]{8} completed: /);
    // The hypervisors' answer, one line per instance: six, each on one node.
    const placed = [...r.out.matchAll(/^ {2}(i-[0-9a-f]{8}) {2}(\S+)/gm)];
    expect(placed.map((m) => m[1]), r.out).toHaveLength(6);
    for (const m of placed) expect(NODES, r.out).toContain(m[2]);
    // The CLI, at the new leader: the partition's service ENABLED, the killed CC a NOTREADY standby.
    expect(r.out).toMatch(/SERVICE\tcluster\tcluster01\tcluster01\tENABLED/);
    expect(r.out).toMatch(/SERVICE\tcluster\tcluster01\tcluster01@127\.0\.103\.254-2011[01]\tNOTREADY/);
    expect(r.out).toContain('each run exactly once');
  }, 520_000);

  it('the Eucalyptus 4 admin tools read the replicas (euserv-describe-services): each leader ENABLED, every standby DISABLED', async () => {
    const creds = await readCredentialsFile(join(dir, 'clc-a', 'admin.credentials'));
    // Any replica answers the read; the killed ones were restarted as standbys by failover.
    const origin = 'http://127.0.103.254:20102';
    const tool = new EucalyptusAdmin(new RequestbuilderSession(creds, EUCALYPTUS_ADMIN_USER_AGENT), adminBootstrap(`${origin}/services/Empyrean/`), adminEc2(`${origin}/services/compute/`));
    const rows = await until('every replica listed and answering', async () => serviceRows((await tool.describeServices({ all: true })).result).filter((r) => r[1] !== 'node').map((r) => r.join(' ')),
      (v) => Array.isArray(v) && v.length === 5 && v.filter((r) => r.endsWith(' disabled')).length === 3);
    expect([...rows].sort()).toEqual([
      'SERVICE cluster cluster01 cluster01 enabled', expect.stringMatching(/^SERVICE cluster cluster01 cluster01@127\.0\.103\.254-2011[01] disabled$/),
      'SERVICE eucalyptus eucalyptus clc enabled',
      expect.stringMatching(/^SERVICE eucalyptus eucalyptus clc@127\.0\.103\.254-2010[0-2] disabled$/), expect.stringMatching(/^SERVICE eucalyptus eucalyptus clc@127\.0\.103\.254-2010[0-2] disabled$/),
    ]);
  }, 120_000);

  it('stop leaves none of the processes the demo recorded', async () => {
    const pids = recordedPids();
    expect(pids.length).toBeGreaterThanOrEqual(14);
    const r = await demo('stop', 120_000);
    expect(r.code, r.out).toBe(0);
    expect(pids.filter((p) => isAlive(p))).toEqual([]);
    expect(recordedPids()).toEqual([]);
    const status = await demo('status', 60_000);
    expect(status.out).toContain('0 of 3 members running');
    expect(status.out).not.toContain('running (pid');
  }, 180_000);
});
