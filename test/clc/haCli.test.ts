/**
 * The built host-HA euca-* commands against an in-process CLC on 127.0.12.1 (serveApp) (fake Clusters, the
 * scripted FakeHa): rows, --json, the password from a file or an environment variable (never an
 * argument), usage errors, and `CODE: message` with exit 1 for a cloud refusal.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.js';
import { serveApp, testAuthenticator, TEST_ADMIN } from './authFixtures.js';
import { ensureBuilt, ROOT } from './buildOnce.js';
import { lines, runBuiltCli, type CliRun } from './cliRunner.js';
import { FakeHa } from './ha/fakeHa.js';
import { harness, type Harness } from './harness.js';

const N1 = '127.0.12.11';
const SECRET = 'cli-bmc-s3cret';

let h: Harness;
let fake: FakeHa;
let url: string;

function cli(file: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runBuiltCli(file, args, { EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey, EC2_SECRET_KEY: TEST_ADMIN.secretKey, ...env });
}

const bmcOf = () => h.ha?.bmc.read().hosts[N1];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

beforeEach(async () => {
  fake = new FakeHa();
  // The CLI signs by the wall clock, so the authenticator checks against it too.
  h = await harness({ authenticator: () => testAuthenticator(systemClock), ha: { provider: fake, actions: fake } });
  const served = await serveApp(h.app);
  url = served.url;
  return () => served.close();
});

describe('euca-configure-ha', () => {
  it('reads the password from a file; prints HOSTHA and BMC rows without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-ha-cli-'));
    const file = join(dir, 'bmc.pw');
    writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
    const r = await cli('configureHa', [N1, '--agent', 'fence_ipmilan', '--address', '127.0.31.1', '--port', '6230', '--username', 'admin', '--password-file', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    const rows = lines(r.stdout);
    expect(rows.slice(0, 2)).toEqual([
      `HOSTHA\t${N1}\tcluster01\tDISABLED\tha-disabled\t-\tHA disabled for the partition`,
      `BMC\t${N1}\tfence_ipmilan\t127.0.31.1\t6230\tadmin\tpassword-set\t-\t-`,
    ]);
    expect(rows.slice(2).every((l) => l.startsWith(`EVENT\t2013-06-01T12:00:00.000Z\t${N1}\t`))).toBe(true);
    expect(rows.some((l) => l.includes('HA configured by'))).toBe(true);
    expect(bmcOf()?.password).toBe(SECRET);
  });

  it('reads the password from a named environment variable (bin wrapper, --json)', async () => {
    const r = await cli('bin/euca-configure-ha', [N1, '--agent', 'fence_redfish', '--address', '127.0.31.2', '--password-env', 'MY_BMC_PW', '--json'], { MY_BMC_PW: SECRET });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    expect(JSON.parse(r.stdout)).toMatchObject({ host: { host: N1, bmc: { agent: 'fence_redfish', passwordSet: 'true' } } });
    expect(bmcOf()?.password).toBe(SECRET);
  });

  it('sets fence_redfish\'s ssl_insecure and systems_uri, and --no-ssl-insecure removes it', async () => {
    const r = await cli('configureHa', [N1, '--agent', 'fence_redfish', '--address', '127.0.35.1', '--port', '16350', '--username', 'ferry',
      '--ssl-insecure', '--systems-uri', '/redfish/v1/Systems/1']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)[1]).toBe(`BMC\t${N1}\tfence_redfish\t127.0.35.1\t16350\tferry\tno-password\tssl-insecure\t/redfish/v1/Systems/1`);
    const off = await cli('configureHa', [N1, '--no-ssl-insecure']);
    expect(off.code).toBe(0);
    expect(bmcOf()?.options).toEqual({ ip: '127.0.35.1', ipport: '16350', username: 'ferry', systems_uri: '/redfish/v1/Systems/1' });
  });

  it('an unset password variable or both sources: an error, nothing sent', async () => {
    const unset = await cli('configureHa', [N1, '--agent', 'fence_ipmilan', '--address', '127.0.31.1', '--password-env', 'NOPE_PW']);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/^error: the environment variable NOPE_PW/);
    const both = await cli('configureHa', [N1, '--password-env', 'X', '--password-file', '/dev/null']);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toMatch(/not both/);
    expect(bmcOf()).toBeUndefined();
    expect(h.store.read().ha.hosts[N1]).toBeUndefined();
  });

  it('a cloud refusal prints CODE: message and exits 1', async () => {
    const r = await cli('configureHa', [N1, '--port', '99999']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^InvalidParameterValue: .*Port/);
  });
});

describe('euca-configure-ha-instance', () => {
  it('sets an instance\'s auto-repair and prints AUTOREPAIR; inherit drops it; a bad level is refused before any request', async () => {
    // The CLC's record of an instance (the CLI under test is the HA one, not RunInstances).
    const id = 'i-0000abcd';
    await h.store.update((d) => {
      d.instances[id] = { instanceId: id, reservationId: 'r-0000abcd', ownerId: 'alice', imageId: 'emi-00000001', vmType: 'm1.small', partition: 'cluster01', launchTime: 0, launchIndex: 0, phase: 'launched' };
    });
    const r = await cli('configureHaInstance', [id, '--auto-repair', 'migrate']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([`AUTOREPAIR\t${id}\tcluster01\tmigrate\tinherit\tmigrate`]);
    expect(h.store.read().ha.instanceAutoRepair).toEqual({ [id]: 'migrate' });
    const back = await cli('configureHaInstance', [id, '--auto-repair', 'inherit']);
    expect(lines(back.stdout)).toEqual([`AUTOREPAIR\t${id}\tcluster01\tinherit\tinherit\tfailover`]);
    const bad = await cli('configureHaInstance', [id, '--auto-repair', 'reboot']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/reboot/);
    await cli('configureHaInstance', [id, '--auto-repair', 'off']);
    expect(lines((await cli('describeHaConfig', [])).stdout)).toContain(`AUTOREPAIR\t${id}\toff`);
    const unknown = await cli('configureHaInstance', ['i-0000beef', '--auto-repair', 'off']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^InvalidInstanceID\.NotFound: /);
  });
});

describe('euca-describe-host-ha', () => {
  it('prints an OWED row for a drain HA still owes the host', async () => {
    await cli('configureHa', [N1, '--agent', 'fence_ipmilan', '--address', '127.0.31.1']);
    // The record as the runner leaves it after a failed attempt (the CLI's rendering is under test here).
    await h.store.update((d) => {
      const rec = d.ha.hosts[N1];
      if (rec) d.ha.hosts[N1] = { ...rec, owed: { kind: 'drain', since: 0, attempts: 2, nextAttemptAt: Date.UTC(2013, 5, 1, 12, 0, 20), inFlight: null, lastOutcome: 'the NC does not answer' } };
    });
    const r = await cli('describeHostHa', [N1]);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toContain(`OWED\t${N1}\tdrain\t2\t2013-06-01T12:00:20.000Z\tthe NC does not answer`);
  });
});

describe('euca-describe-ha-events --follow', () => {
  it('prints the log so far, then each new event as it is logged, none missed and none twice, until interrupted', async () => {
    await cli('configureHa', [N1, '--agent', 'fence_ipmilan', '--address', '127.0.31.1']);
    const before = h.ha?.control.events({ host: N1 }) ?? [];
    expect(before.length).toBeGreaterThan(0);
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'clc', 'cli', 'describeHaEvents.js'), '--host', N1, '--follow'], {
      env: { PATH: process.env.PATH ?? '', EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey, EC2_SECRET_KEY: TEST_ADMIN.secretKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const waiters: (() => void)[] = [];
    child.stdout.on('data', (b: Buffer) => { out += b.toString(); for (const w of waiters.splice(0)) w(); });
    child.stderr.on('data', (b: Buffer) => { err += b.toString(); });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    /**
     * Resolves once `n` EVENT lines are printed. The CLC's long poll looks at the log on its (manual)
     * clock, so the clock moves on while the test waits for output; the test's own timeout bounds the wait.
     */
    const printed = async (n: number): Promise<string[]> => {
      while (lines(out).length < n) {
        if (child.exitCode !== null) throw new Error(`--follow exited (${child.exitCode}): ${err}`);
        h.clock.advance(100);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 50); });
      }
      return lines(out);
    };
    try {
      const first = await printed(before.length);
      expect(first).toHaveLength(before.length);
      // Logged while the command waits in its long poll: each printed once, in order.
      await cli('enableHa', [N1]);
      await cli('suspendHa', ['-p', 'cluster01', '--minutes', '30', '--reason', 'rack work']);
      const after = h.ha?.control.events({ host: N1 }) ?? [];
      expect(after.length).toBeGreaterThan(before.length);
      const all = await printed(after.length);
      expect(all).toHaveLength(after.length);
      expect(all.slice(0, first.length)).toEqual(first);
      // The same events in the same order as the log holds them: host and message of each line.
      expect(all.map((l) => { const f = l.split('\t'); return [f[0], f[2], f.slice(5).join('\t')]; }))
        .toEqual(after.map((e) => ['EVENT', N1, e.message]));
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
    expect(err).toBe('');
  }, 60_000);
});

describe('the other host-HA commands', () => {
  it('configure the cluster, enable, describe with a dry run, fence, events, disable', async () => {
    await cli('configureHa', [N1, '--agent', 'fence_ipmilan', '--address', '127.0.31.1']);
    const cfg = await cli('configureHaCluster', ['cluster01', '--set', 'fenceTimeoutMs=45000', '--max-unhealthy', '1', '--unhealthy-range', '[0-5]', '--auto-repair', 'migrate']);
    expect(cfg.code).toBe(0);
    expect(lines(cfg.stdout)).toContain('HACONFIG\tcluster01\tdisabled\t1\tmigrate\tfenceTimeoutMs=45000');
    expect(JSON.parse((await cli('configureHaCluster', ['cluster01', '--unhealthy-range', '[0-5]', '--json'])).stdout).partitionSet[0].unhealthyRange).toBe('[0-5]');

    const on = await cli('enableHa', ['-c', 'cluster01']);
    expect(on.code).toBe(0);
    expect(lines(on.stdout)[0]).toBe(`HOSTHA\t${N1}\tcluster01\tAVAILABLE\tha-enabled\t-\teligible`);
    await h.ha?.runner.idle();

    const d = await cli('describeHostHa', ['--dry-run', '--events', '1']);
    expect(d.code).toBe(0);
    const rows = lines(d.stdout);
    expect(rows[0]).toMatch(new RegExp(`^HOSTHA\t${N1.replace(/\./g, '\\.')}\tcluster01\tAVAILABLE\tha-enabled\t-\t`));
    expect(rows.find((l) => l.startsWith('DRYRUN'))).toMatch(/^DRYRUN\t127\.0\.12\.11\t\S+\t-\tcheck health/);
    expect(rows.filter((l) => l.startsWith('EVENT'))).toHaveLength(1);

    fake.fences.set(N1, 'fail');
    const healthy = await cli('bin/euca-fence-host', [N1]);
    expect(healthy.code).toBe(1);
    expect(healthy.stderr).toMatch(/^HostHealthy: Host 127\.0\.12\.11 is up and healthy/);
    const f = await cli('bin/euca-fence-host', [N1, '--force']);
    expect(f.code).toBe(0);
    expect(lines(f.stdout)[0]).toMatch(/^HOSTHA\t127\.0\.12\.11\tcluster01\tFENCING\t/);
    await h.ha?.runner.idle();
    const c = await cli('confirmHostFenced', [N1]);
    expect(c.code).toBe(0);
    expect(lines(c.stdout)[0]).toMatch(/^HOSTHA\t127\.0\.12\.11\tcluster01\tFENCED\t/);
    const again = await cli('confirmHostFenced', [N1]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^IncorrectHostHAState: Host 127\.0\.12\.11 is FENCED/);

    const ev = await cli('describeHaEvents', ['--host', N1, '--level', 'critical']);
    expect(ev.code).toBe(0);
    expect(lines(ev.stdout).length).toBeGreaterThan(0);
    for (const l of lines(ev.stdout)) expect(l).toMatch(/^EVENT\t\S+\t127\.0\.12\.11\tcritical\t/);

    const off = await cli('disableHa', [N1]);
    // HA off, but the fenced host stays FENCED until EnableService returns it.
    expect(lines(off.stdout)[0]).toMatch(/^HOSTHA\t127\.0\.12\.11\tcluster01\tFENCED\tha-disabled\t/);
    const conf = await cli('describeHaConfig', []);
    expect(lines(conf.stdout)).toContain(`HOSTCONFIG\t${N1}\tcluster01\tha-disabled\tfence_ipmilan 127.0.31.1:- no-password`);
  }, 180_000); // a dozen CLI processes, each a node start: minutes on a busy 2-core machine

  it('suspend and resume; a usage error calls nothing', async () => {
    const s = await cli('suspendHa', ['-p', 'cluster02', '--minutes', '30', '--reason', 'rack work']);
    expect(s.code).toBe(0);
    expect(lines(s.stdout)).toEqual([expect.stringMatching(/^SUSPENDED\tpartition:cluster02\t\d{4}-\S+Z\t\S+\track work$/)]);
    expect(Object.keys(h.store.read().ha.suspended)).toEqual(['partition:cluster02']);
    const r = await cli('resumeHa', ['-p', 'cluster02']);
    expect(lines(r.stdout)).toEqual(['RESUMED\tpartition:cluster02\twas-suspended']);
    const usage = await cli('suspendHa', ['-p', 'cluster02', '-c', 'cluster02']);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toMatch(/exactly one/);
    const both = await cli('enableHa', [N1, '-c', 'cluster01']);
    expect(both.code).not.toBe(0);
    expect(h.store.read().ha.suspended).toEqual({});
  });

  it('external remediation: a webhook with the secret from a file (a REMEDIATOR row, never the secret); a report of a host not remediating is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-ha-cli-'));
    const file = join(dir, 'remediator.token');
    writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
    const cfg = await cli('configureHaCluster', ['cluster01', '--remediation-webhook', 'http://127.0.71.1:18240/r', '--remediation-secret-file', file]);
    expect(cfg.stderr).toBe('');
    expect(cfg.stdout).not.toContain(SECRET);
    expect(lines(cfg.stdout)).toContain('REMEDIATOR\tcluster01\twebhook http://127.0.71.1:18240/r\tsecret-set');
    expect(h.ha?.bmc.read().remediationSecrets.cluster01).toBe(SECRET);
    const cmd = await cli('configureHaCluster', ['cluster01', '--remediation-command', '/usr/local/bin/fix', '--remediation-arg', '-v', '--remediation-arg', 'x y']);
    expect(lines(cmd.stdout)).toContain('REMEDIATOR\tcluster01\tcommand /usr/local/bin/fix -v x y\tsecret-set');
    await cli('configureHa', [N1]);
    const r = await cli('bin/euca-complete-host-remediation', [N1, '5-abc', '--result', 'succeeded']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^IncorrectHostHAState: Host 127\.0\.12\.11 is DISABLED: .*no external remediation is in progress/);
    const usage = await cli('completeHostRemediation', [N1, '5-abc']);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toMatch(/--result/);
  });
});
