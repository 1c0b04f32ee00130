/**
 * External remediation in a whole cloud of real processes (issue 15), on 127.0.71.0/24 with mutual
 * TLS: a CLC running its HA runtime, a CC and four simulated hosts, each one process group behind an
 * ipmi_sim BMC (UDP 18251-18254) whose chassis power is that group, fenced by the real
 * fence_ipmilan. The partition's remediation is configured through the admin API: first a webhook
 * (a real HTTP receiver in this test, 127.0.71.100:18210, that records each POST and answers 202; the
 * test then plays the remediator: it powers the host on and calls CompleteHostRemediation through the
 * admin API), then a command (a script this test writes). Every process is stopped by PID.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HaState } from '../../clc/ha/hostHaState.js';
import { cloudLayout } from '../../scripts/cloudLayout.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { firstPowerStatusesAnswered, haProbesOf } from '../helpers/haRecords.js';
import { groupAlive, haSettingParams, installFencingLab, startLabBmc, type LabBmc } from '../helpers/fencingLab.js';

const SUBNET = 71;
const USER = 'ferry';
const PASSWORD = 'ha-pw-71';
const SECRET = 'remediator-token-71';
const RECEIVER = { host: '127.0.71.100', port: 18210 };
const BMC_PORT = 18251;
const SETTINGS = {
  healthCheckIntervalMs: 500, healthCheckTimeoutMs: 3000,
  activityCheckInitialDelayMs: 500, activityCheckIntervalMs: 1000, activityCheckTimeoutMs: 3000,
  activityCheckMaxAttempts: 3, activityCheckFailureRatio: 0.5,
  degradedMaxPeriodMs: 600_000, recoverTimeoutMs: 8000, recoverWaitPeriodMs: 30_000, recoverFailureThreshold: 1, fenceTimeoutMs: 8000,
  // The lab's BMC reads a crashed host as powered off, which the power watch would fence at once: kept out.
  powerCheckIntervalMs: 3_600_000,
  // Long enough for a busy machine to answer; the timeout case waits this long.
  externalRemediationTimeoutMs: 8000,
};

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface Posted { readonly remediationId: string; readonly host: string; readonly partition: string; readonly authorization: string | undefined }

describe('external remediation in a running cloud (webhook, command, storm gate)', () => {
  const cloud = new TestCloud(SUBNET, 4, { clcArgs: ['--ha-tick-ms', '200', '--auth', 'sigv4'], simArgs: ['--write-interval-ms', '200'], ccArgs: [] });
  const bmcs = new Map<string, LabBmc>();
  const specs = cloudLayout({ baseDir: cloud.baseDir, controllerHost: cloud.controller, nodeHosts: cloud.nodeHosts, simArgs: ['--write-interval-ms', '200'] });
  const posts: Posted[] = [];
  let receiver: Server | undefined;

  type HaRec = { state: HaState; remediation: { id: string; accepted: boolean } | null };
  const clcJson = () => readFileSync(join(cloud.baseDir, 'clc', 'clc.json'), 'utf8');
  const haHost = (h: string): HaRec | undefined => {
    try {
      return (JSON.parse(clcJson()) as { data: { ha: { hosts: Record<string, HaRec> } } }).data.ha.hosts[h];
    } catch {
      return undefined; // being replaced
    }
  };
  const events = (h: string) => (JSON.parse(clcJson()) as { data: { ha: { events: { host: string; kind: string; to?: string; message: string }[] } } }).data.ha.events.filter((e) => e.host === h);
  const transitions = (h: string): string[] => events(h).filter((e) => e.kind === 'transition').map((e) => e.to ?? '');
  const messages = (h: string): string[] => events(h).map((e) => e.message);
  const waitFor = async (what: string, done: () => boolean | Promise<boolean>, ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (await done()) return;
      await sleep(100);
    }
    const states = cloud.nodeHosts.map((h) => `${h} ${haHost(h)?.state ?? '?'}: ${messages(h).slice(-4).join(' | ')}`);
    throw new Error(`timed out waiting for ${what}; HA: ${states.join('; ')}`);
  };
  /** A witness that HA kept running its passes: some watched host's next health check moved `rounds` intervals on. */
  const haPasses = async (rounds: number): Promise<void> => {
    // The next checks are paced in the CLC's memory (not written for themselves): DescribeHostHA shows them.
    const latest = async () => Math.max(0, ...[...(await haProbesOf((q) => cloud.query(q), cloud.nodeHosts)).values()].map((p) => p.nextHealthCheckAt));
    const start = await latest();
    await waitFor(`${rounds} more health-check rounds in the CLC`, async () => (await latest()) >= start + rounds * SETTINGS.healthCheckIntervalMs, 30_000);
  };
  const admin = async (params: Record<string, string>) => {
    const r = await cloud.query(params);
    if (r.status !== 200) throw new Error(`${params.Action ?? '?'} answered ${r.status}: ${r.text}`);
    return r;
  };
  const crash = async (host: string): Promise<void> => {
    const pg = await (bmcs.get(host) as LabBmc).hostPgid();
    if (pg) process.kill(-pg, 'SIGKILL');
    for (let i = 0; i < 100 && pg && (await groupAlive(pg)); i++) await sleep(50);
  };
  const powerOn = async (host: string): Promise<void> => {
    const port = String(BMC_PORT + cloud.nodeHosts.indexOf(host));
    await exec('ipmitool', ['-I', 'lanplus', '-C', '3', '-H', host, '-p', port, '-U', USER, '-P', PASSWORD, 'chassis', 'power', 'on'], { timeout: 20_000 });
  };
  const available = () => cloud.nodeHosts.filter((h) => haHost(h)?.state === 'AVAILABLE');

  beforeAll(async () => {
    await installFencingLab();
    await mkdir(join(cloud.baseDir, 'logs'), { recursive: true });
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (b: Buffer) => { body += b.toString('utf8'); });
      req.on('end', () => {
        const j = JSON.parse(body) as { remediationId: string; host: string; partition: string };
        posts.push({ remediationId: j.remediationId, host: j.host, partition: j.partition, authorization: req.headers.authorization });
        res.statusCode = 202;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(RECEIVER.port, RECEIVER.host, resolve));
    for (const [i, host] of cloud.nodeHosts.entries()) {
      const dir = join(cloud.baseDir, 'bmc', host);
      await mkdir(dir, { recursive: true });
      const mine = specs.filter((s) => s.name === `simhv-${host}` || s.name === `nc-${host}`);
      const lines = mine.map((s) => `node ${sh(join(ROOT, s.entry))} ${s.args.map(sh).join(' ')} >>${sh(join(cloud.baseDir, 'logs', `${s.name}.log`))} 2>&1 &`);
      const script = join(cloud.baseDir, `host-${host}.sh`);
      await writeFile(script, `#!/usr/bin/env bash\n${lines.join('\n')}\nwait\n`);
      bmcs.set(host, await startLabBmc({ addr: host, port: BMC_PORT + i, user: USER, password: PASSWORD, hostCommand: ['bash', script], dir }));
    }
    await cloud.start(['cc', 'clc']);
    await admin({ Action: 'ConfigureHAForCluster', ...haSettingParams(SETTINGS) });
    // Storm bound 2 of 4; external remediation through the webhook, with a secret.
    await admin({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', MaxUnhealthy: '2', RemediationWebhook: `http://${RECEIVER.host}:${RECEIVER.port}/remediate`, RemediationSecret: SECRET });
    for (const [i, host] of cloud.nodeHosts.entries()) {
      await admin({ Action: 'ConfigureHAForHost', Host: host, Agent: 'fence_ipmilan', Address: host, Port: String(BMC_PORT + i), Username: USER, Password: PASSWORD, TimeoutMs: '6000' });
    }
    await admin({ Action: 'EnableHAForCluster', Partition: 'cluster01' });
    await waitFor('every host AVAILABLE', () => cloud.nodeHosts.every((h) => haHost(h)?.state === 'AVAILABLE'), 60_000);
    // The power watch's first status (asked at once) has answered "on" for every host; the next is an hour away.
    await waitFor('the first power status of every host', () => firstPowerStatusesAnswered((q) => cloud.query(q), cloud.nodeHosts), 60_000);
  }, 300_000);

  afterAll(async () => {
    await cloud.stopAll();
    for (const bmc of bmcs.values()) {
      const pg = await bmc.hostPgid();
      await bmc.stop();
      if (pg && (await groupAlive(pg))) process.kill(-pg, 'SIGKILL');
    }
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await cloud.destroy();
  }, 60_000);

  it('a crashed host is handed to the webhook once, not fenced while it waits; reported done, it is re-checked and AVAILABLE', async () => {
    const victim = cloud.nodeHosts[0] as string;
    await crash(victim);
    await waitFor('REMEDIATING', () => haHost(victim)?.state === 'REMEDIATING', 40_000);
    await waitFor('the webhook accepted it', () => haHost(victim)?.remediation?.accepted === true, 20_000);
    const id = haHost(victim)?.remediation?.id ?? '';
    expect(posts).toEqual([{ remediationId: id, host: victim, partition: 'cluster01', authorization: `Bearer ${SECRET}` }]);
    // DescribeHostHA shows the state and the remediation in flight.
    const d = await admin({ Action: 'DescribeHostHA', 'Host.1': victim });
    expect(d.text).toContain('<state>REMEDIATING</state>');
    expect(d.text).toContain(`<remediationId>${id}</remediationId>`);
    // Nothing is fenced or power-cycled while it waits.
    await haPasses(3);
    expect(haHost(victim)?.state).toBe('REMEDIATING');
    const path = transitions(victim);
    expect(path.slice(path.indexOf('REMEDIATING'))).toEqual(['REMEDIATING']);
    expect(messages(victim).some((m) => /being fenced|power cycle/.test(m))).toBe(false);

    // The remediator does its work (powers the host on) and reports through the admin API.
    await powerOn(victim);
    const stale = await cloud.query({ Action: 'CompleteHostRemediation', Host: victim, RemediationId: '1-stale', Result: 'succeeded' });
    expect([stale.status, stale.text.includes('RemediationIdMismatch')]).toEqual([409, true]);
    expect(haHost(victim)?.state).toBe('REMEDIATING');
    await admin({ Action: 'CompleteHostRemediation', Host: victim, RemediationId: id, Result: 'succeeded', Message: 'powered on' });
    await waitFor('AVAILABLE again (a passing health check)', () => haHost(victim)?.state === 'AVAILABLE', 60_000);
    expect(transitions(victim).slice(-3)).toEqual(['REMEDIATING', 'RECOVERED', 'AVAILABLE']);
    expect(posts.filter((p) => p.host === victim)).toHaveLength(1);
    // A late report of the concluded remediation is refused and changes nothing.
    const late = await cloud.query({ Action: 'CompleteHostRemediation', Host: victim, RemediationId: id, Result: 'failed' });
    expect([late.status, late.text.includes('IncorrectHostHAState')]).toEqual([409, true]);
    expect(haHost(victim)?.state).toBe('AVAILABLE');
    // The secret is in bmc.json only: not in clc.json, not in the CLC's log.
    expect(clcJson()).not.toContain(SECRET);
    expect(cloud.log('clc')).not.toContain(SECRET);
  }, 180_000);

  it('accepted but never reported within the timeout: escalated to the fence through the BMC, then FENCED', async () => {
    const victim = cloud.nodeHosts[1] as string;
    const before = posts.length;
    await crash(victim);
    await waitFor('REMEDIATING', () => haHost(victim)?.state === 'REMEDIATING', 40_000);
    await waitFor('FENCED', () => haHost(victim)?.state === 'FENCED', 60_000);
    const path = transitions(victim);
    expect(path.slice(path.lastIndexOf('REMEDIATING'))).toEqual(['REMEDIATING', 'FENCING', 'FENCED']);
    expect(messages(victim).some((m) => m.includes(`not reported done within ${SETTINGS.externalRemediationTimeoutMs} ms (accepted)`))).toBe(true);
    expect(posts.slice(before).map((p) => p.host)).toEqual([victim]);
  }, 150_000);

  it('a command that fails escalates at once; the secret reaches it on stdin, never in its arguments', async () => {
    const dir = join(cloud.baseDir, 'remediator');
    await mkdir(dir, { recursive: true });
    const script = join(dir, 'reprovision.sh');
    await writeFile(script, `#!/bin/sh\nprintf '%s\\n' "$@" >> ${sh(join(dir, 'argv'))}\ncat >> ${sh(join(dir, 'stdin'))}\necho "reprovisioning failed"\nexit 1\n`);
    await chmod(script, 0o755);
    await admin({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', RemediationCommand: script, 'RemediationArg.1': '--site', 'RemediationArg.2': 'lab71' });
    const victim = cloud.nodeHosts[2] as string;
    const before = posts.length;
    await crash(victim);
    await waitFor('FENCED', () => haHost(victim)?.state === 'FENCED', 60_000);
    const path = transitions(victim);
    expect(path.slice(path.lastIndexOf('REMEDIATING'))).toEqual(['REMEDIATING', 'FENCING', 'FENCED']);
    expect(messages(victim).some((m) => m.includes('exited 1: reprovisioning failed'))).toBe(true);
    expect(await readFile(join(dir, 'argv'), 'utf8')).toBe('--site\nlab71\n');
    const stdin = await readFile(join(dir, 'stdin'), 'utf8');
    expect(stdin.match(/^action=remediate$/gm)).toHaveLength(1);
    expect(stdin).toContain(`host=${victim}\n`);
    expect(stdin).toContain(`secret=${SECRET}\n`);
    expect(posts.length).toBe(before);
  }, 150_000);

  it('beyond maxUnhealthy (2) nothing is handed out: the storm gate holds external remediation like a fence', async () => {
    const victim = available().find((h) => h === cloud.nodeHosts[3]) ?? '';
    expect(victim).not.toBe('');
    const dir = join(cloud.baseDir, 'remediator');
    const runs = (await readFile(join(dir, 'stdin'), 'utf8')).match(/^action=remediate$/gm)?.length ?? 0;
    const seen = transitions(victim).length;
    await crash(victim);
    await waitFor('held back by storm protection', () => messages(victim).some((m) => m.includes('REMEDIATING held back: storm protection')), 40_000);
    await haPasses(3);
    expect(transitions(victim).slice(seen)).not.toContain('REMEDIATING');
    expect(transitions(victim).slice(seen)).not.toContain('FENCING');
    expect((await readFile(join(dir, 'stdin'), 'utf8')).match(/^action=remediate$/gm)?.length ?? 0).toBe(runs);
  }, 90_000);
});
