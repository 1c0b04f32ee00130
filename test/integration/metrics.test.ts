/**
 * Issue 20's metrics in a running cloud of real processes on 127.0.74.0/24 (mutual TLS between the
 * tiers): the CLC, the CC and every NC serve Prometheus metrics on their own listener for bearers
 * of their scrape token. Scraped before and after real work (RunInstances, a refused request, a
 * drain of one node), the series move as the run did: requests by action and code, the gate, store
 * writes, poll rounds, the handshake steps, migrations by outcome with bytes and durations, nodes
 * and instances by state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, placeOn } from '../helpers/cloudApi.js';
import { parseProm, valueOf, type Sample } from '../helpers/promText.js';

const PORT = { clc: 19190, cc: 19191, nc: 19192 };
const cloud = new TestCloud(74, 3, {
  simArgs: ['--time-scale', '0.5', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  clcArgs: ['--metrics-port', String(PORT.clc)],
  ccArgs: ['--poll-interval-ms', '1000', '--metrics-port', String(PORT.cc)],
  ncArgs: ['--metrics-port', String(PORT.nc)],
});
const [n1, n2] = cloud.nodeHosts as [string, string, string];

const tokenOf = (dir: string): string => readFileSync(join(cloud.baseDir, dir, 'metrics.token'), 'utf8').trim();
const target = {
  clc: () => ({ url: `http://${cloud.controller}:${PORT.clc}/metrics`, token: tokenOf('clc') }),
  cc: () => ({ url: `http://${cloud.controller}:${PORT.cc}/metrics`, token: tokenOf('cc') }),
  nc: (host: string) => ({ url: `http://${host}:${PORT.nc}/metrics`, token: tokenOf(join('hosts', host, 'nc')) }),
};

async function scrape(t: { url: string; token: string }): Promise<Sample[]> {
  const r = await fetch(t.url, { headers: { authorization: `Bearer ${t.token}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseProm(await r.text());
}

async function migrationDone(id: string): Promise<any> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const m = arr<any>((await adminCall(cloud, { Action: 'DescribeMigrations', 'MigrationId.1': id })).migrationSet?.item)[0];
    if (m && m.state !== 'active') return m;
    if (Date.now() > deadline) throw new Error(`migration ${id} still active: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => { await cloud.start(); }, 120_000);
afterAll(async () => { await cloud.destroy(); });

describe('Prometheus metrics of a running cloud', () => {
  it('every listener refuses a scrape without the token, a wrong path and a write, each with a code', async () => {
    for (const t of [target.clc(), target.cc(), target.nc(n1)]) {
      const none = await fetch(t.url);
      expect(none.status).toBe(401);
      expect(await none.text()).toMatch(/^MetricsUnauthorized: /);
      const wrong = await fetch(t.url, { headers: { authorization: 'Bearer not-the-token' } });
      expect(wrong.status).toBe(401);
      const path = await fetch(t.url.replace('/metrics', '/status'), { headers: { authorization: `Bearer ${t.token}` } });
      expect(path.status).toBe(404);
      expect(await path.text()).toMatch(/^MetricsNotFound: /);
      const post = await fetch(t.url, { method: 'POST', headers: { authorization: `Bearer ${t.token}` }, body: 'x' });
      expect(post.status).toBe(405);
      expect(await post.text()).toMatch(/^MetricsMethodNotAllowed: /);
    }
    // The token file is the operator's alone.
    expect(readFileSync(join(cloud.baseDir, 'clc', 'metrics.token')).length).toBeGreaterThan(32);
  });

  it('the CC polls its NCs over the node watch: rounds go on while the NCs answer (almost) no ncDescribeResource', async () => {
    const describes = async (): Promise<number> => {
      let n = 0;
      for (const h of cloud.nodeHosts) n += valueOf(await scrape(target.nc(h)), 'ferry_wire_requests_total', { op: 'ncDescribeResource', code: 'OK' });
      return n;
    };
    const polls0 = valueOf(await scrape(target.cc()), 'ferry_cc_node_polls_total');
    const described0 = await describes();
    // Five rounds of three nodes (1 s period).
    await expect.poll(async () => valueOf(await scrape(target.cc()), 'ferry_cc_node_polls_total') - polls0, { timeout: 60_000, interval: 500 })
      .toBeGreaterThanOrEqual(15);
    const polls = valueOf(await scrape(target.cc()), 'ferry_cc_node_polls_total') - polls0;
    // Over HTTPS each poll was an ncDescribeResource; over the watch, a describe is only the fallback
    // of a watch that could not ask (none in a steady cloud, a few if one was reconnecting).
    expect(await describes() - described0).toBeLessThan(polls / 3);
    // ... and every node is seen, reachable, by them.
    expect(valueOf(await scrape(target.cc()), 'ferry_cc_nodes', { state: 'enabled', reachable: 'true' })).toBe(3);
  }, 120_000);

  it('the series move as the run does: requests, the gate, store writes, polls, a drain\'s steps and migrations', async () => {
    const clc0 = await scrape(target.clc());
    const cc0 = await scrape(target.cc());
    const nc0 = await scrape(target.nc(n1));
    expect(valueOf(clc0, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    const ids = await placeOn(cloud, n1, 2);
    const bad = await cloud.query({ Action: 'DescribeInstances', 'InstanceId.1': 'not-an-id' });
    expect(bad.status).toBe(400);
    const r = await adminCall(cloud, { Action: 'MigrateInstances', SourceHost: n1, 'DestinationHost.1': n2, AllowHosts: 'true' });
    const done = await migrationDone(r.migrationId as string);
    expect(done.state).toBe('completed');

    const clc1 = await scrape(target.clc());
    const delta = (before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}): number =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta(clc0, clc1, 'ferry_api_requests_total', { action: 'RunInstances', code: 'OK' })).toBe(1);
    expect(delta(clc0, clc1, 'ferry_api_requests_total', { action: 'MigrateInstances', code: 'OK' })).toBe(1);
    expect(delta(clc0, clc1, 'ferry_api_requests_total', { action: 'DescribeInstances', code: String(bad.text.match(/<Code>([^<]+)<\/Code>/)?.[1]) })).toBe(1);
    // placeOn disabled and enabled the two other nodes: four changes through the gate.
    expect(delta(clc0, clc1, 'ferry_api_requests_total', { action: 'DisableService', code: 'OK' })).toBe(2);
    expect(delta(clc0, clc1, 'ferry_gate_wait_seconds_count', { outcome: 'admitted' })).toBeGreaterThanOrEqual(6);
    expect(delta(clc0, clc1, 'ferry_api_request_duration_seconds_count', { action: 'RunInstances' })).toBe(1);
    expect(delta(clc0, clc1, 'ferry_store_write_seconds_count')).toBeGreaterThan(0);
    expect(valueOf(clc1, 'ferry_gate_waiting')).toBe(0);
    // A single replica leads (issue 21: ferry_leader).
    expect(valueOf(clc1, 'ferry_leader')).toBe(1);

    const cc1 = await scrape(target.cc());
    expect(delta(cc0, cc1, 'ferry_cc_poll_round_seconds_count')).toBeGreaterThan(0);
    expect(delta(cc0, cc1, 'ferry_cc_node_polls_total')).toBeGreaterThanOrEqual(3);
    expect(delta(cc0, cc1, 'ferry_cc_migration_step_seconds_count', { step: 'commit', result: 'ok' })).toBe(ids.length);
    expect(valueOf(cc1, 'ferry_migration_items', { state: 'completed' }) - valueOf(cc0, 'ferry_migration_items', { state: 'completed' })).toBe(ids.length);
    expect(valueOf(cc1, 'ferry_cc_nodes', { state: 'enabled', reachable: 'true' })).toBe(3);
    expect(valueOf(cc1, 'ferry_leader')).toBe(1);
    expect(valueOf(cc1, 'ferry_cc_instances', { state: 'running' })).toBeGreaterThanOrEqual(ids.length);

    const nc1 = await scrape(target.nc(n1));
    expect(delta(nc0, nc1, 'ferry_migrations_total', { outcome: 'completed' })).toBe(ids.length);
    expect(delta(nc0, nc1, 'ferry_migration_duration_seconds_count')).toBe(ids.length);
    expect(delta(nc0, nc1, 'ferry_migration_transferred_bytes_total'))
      .toBe(arr<any>(done.itemSet.item).reduce((s: number, i: any) => s + Number(i.stats.bytesTransferred), 0));
    expect(delta(nc0, nc1, 'ferry_store_write_seconds_count', { kind: 'ferry-nc' })).toBeGreaterThan(0);
    expect(valueOf(nc1, 'ferry_nc_migration_items', { role: 'source', state: 'completed' })).toBe(ids.length);
    // The tiers' wire services count what they answered: the source NC took the CC's commit of each item.
    expect(delta(nc0, nc1, 'ferry_wire_requests_total', { op: 'ncMigrateInstances', code: 'OK' })).toBeGreaterThanOrEqual(ids.length);
    expect(delta(cc0, cc1, 'ferry_wire_requests_total', { op: 'ccMigrateInstances', code: 'OK' })).toBe(1);
    const dest = await scrape(target.nc(n2));
    expect(valueOf(dest, 'ferry_nc_instances', { phase: 'running' })).toBeGreaterThanOrEqual(ids.length);
  }, 180_000);
});
