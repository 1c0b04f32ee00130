/**
 * The metrics plumbing (issue 20) on its own: the scrape token file, the listener on 127.0.74.200
 * (token, paths, methods, HEAD), the channels (nothing delivered once unsubscribed), the daemons'
 * --metrics-* flags, and the tiers' series read from state when scraped.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCcConfig } from '../../cc/config.js';
import { parseClcConfig } from '../../clc/config.js';
import { parseNcConfig } from '../../nc/config.js';
import { ConfigError } from '../../shared/config/compileConfig.js';
import { silentLogger } from '../../shared/log.js';
import { gateWait, storeWrite } from '../../shared/metrics/channels.js';
import { daemonMetrics } from '../../shared/metrics/registry.js';
import { addLeaderMetric } from '../../shared/metrics/leaderMetrics.js';
import { serveMetrics, type MetricsServer } from '../../shared/metrics/server.js';
import { loadOrCreateScrapeToken } from '../../shared/metrics/token.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { parseProm, valueOf } from '../helpers/promText.js';

const HOST = '127.0.74.200';
const dir = (): string => mkdtempSync(join(tmpdir(), 'ferry-metrics-'));

describe('the scrape token file', () => {
  it('is made mode 0600 when missing, then read as it is', async () => {
    const file = join(dir(), 'metrics.token');
    const first = await loadOrCreateScrapeToken(file);
    expect(first.created).toBe(true);
    expect(first.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await loadOrCreateScrapeToken(file);
    expect(again).toEqual({ token: first.token, created: false });
  });

  it('an operator\'s own token is used; a file that is not one token is refused with a code, never replaced', async () => {
    const d = dir();
    writeFileSync(join(d, 'mine'), 'operator-chosen-token-1234\n', { mode: 0o600 });
    expect((await loadOrCreateScrapeToken(join(d, 'mine'))).token).toBe('operator-chosen-token-1234');
    for (const text of ['short', 'two tokens here-and-there', '']) {
      writeFileSync(join(d, 'bad'), text);
      const e = await loadOrCreateScrapeToken(join(d, 'bad')).catch((x: unknown) => x);
      expect(isFerryError(e) && e.code).toBe('ScrapeTokenUnreadable');
    }
  });
});

describe('the metrics listener', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => { await server?.close(); });

  it('serves the registry to the token\'s bearer only, at /metrics, for GET and HEAD', async () => {
    const registry = new Registry();
    new Counter({ name: 'ferry_test_total', help: 'test', registers: [registry] }).inc(3);
    server = await serveMetrics({ host: HOST, port: 19193, registry, token: 'a-token-of-enough-length', tokenFile: '/etc/ferry/metrics.token', logger: silentLogger() });
    const auth = { authorization: 'Bearer a-token-of-enough-length' };
    const ok = await fetch(server.url, { headers: auth });
    expect(ok.status).toBe(200);
    expect(valueOf(parseProm(await ok.text()), 'ferry_test_total')).toBe(3);
    const head = await fetch(server.url, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const cases: [RequestInit, string, number, RegExp][] = [
      [{}, '/metrics', 401, /^MetricsUnauthorized: .*\/etc\/ferry\/metrics\.token/],
      [{ headers: { authorization: 'Bearer a-token-of-enough-lengtH' } }, '/metrics', 401, /^MetricsUnauthorized/],
      [{ headers: { authorization: 'a-token-of-enough-length' } }, '/metrics', 401, /^MetricsUnauthorized/],
      [{ headers: auth }, '/', 404, /^MetricsNotFound: no such path \//],
      [{ headers: auth, method: 'DELETE' }, '/metrics', 405, /^MetricsMethodNotAllowed: method DELETE/],
    ];
    for (const [init, path, status, body] of cases) {
      const r = await fetch(`http://${HOST}:19193${path}`, init);
      expect(r.status).toBe(status);
      expect(await r.text()).toMatch(body);
    }
  });
});

describe('the channels and a daemon\'s registry', () => {
  it('store writes are counted while subscribed, and no longer once closed', async () => {
    const m = daemonMetrics('nc', { host: HOST });
    storeWrite.publish({ kind: 'ferry-nc', seconds: 0.002 });
    storeWrite.publish({ kind: 'ferry-nc', seconds: 0.004 });
    const text = await m.registry.metrics();
    const samples = parseProm(text);
    expect(valueOf(samples, 'ferry_store_write_seconds_count', { kind: 'ferry-nc', daemon: 'nc', host: HOST })).toBe(2);
    expect(valueOf(samples, 'ferry_store_write_seconds_sum', { kind: 'ferry-nc' })).toBeCloseTo(0.006, 6);
    m.close();
    storeWrite.publish({ kind: 'ferry-nc', seconds: 1 });
    expect(valueOf(parseProm(await m.registry.metrics()), 'ferry_store_write_seconds_count')).toBe(2);
  });

  it('a listener gets what is published while it is subscribed, nothing after', () => {
    const seen: unknown[] = [];
    const off = gateWait.subscribe((e) => seen.push(e));
    gateWait.publish({ kind: 'change', outcome: 'admitted', seconds: 0 });
    off();
    gateWait.publish({ kind: 'change', outcome: 'refused', seconds: 1 });
    expect(seen).toEqual([{ kind: 'change', outcome: 'admitted', seconds: 0 }]);
  });
});

describe('the --metrics-* flags', () => {
  const problems = (parse: () => unknown): string[] => {
    try {
      parse();
    } catch (e) {
      if (e instanceof ConfigError) return [...e.problems];
      throw e;
    }
    return [];
  };

  it('every daemon takes them, from flags or its environment; off when unset', () => {
    expect(parseClcConfig(['--state-dir', 's', '--insecure-plaintext'], {}).metricsPort).toBeUndefined();
    expect(parseClcConfig(['--state-dir', 's', '--insecure-plaintext', '--metrics-port', '9100'], {}).metricsPort).toBe(9100);
    expect(parseCcConfig(['--state-dir', 's', '--insecure-plaintext'], { FERRY_CC_METRICS_PORT: '9101', FERRY_CC_METRICS_TOKEN_FILE: '/t' }))
      .toMatchObject({ metricsPort: 9101, metricsTokenFile: '/t' });
    expect(parseNcConfig(['--host', '127.0.1.1', '--state-dir', 's', '--insecure-plaintext', '--metrics-port', '9102'], {}).metricsPort).toBe(9102);
    expect(parseNcConfig(['--host', '127.0.1.1', '--state-dir', 's', '--insecure-plaintext'], {}).metricsPort).toBeUndefined();
  });

  it('a bad port is named by its flag', () => {
    for (const bad of ['0', '65536', 'x', '-1']) {
      expect(problems(() => parseClcConfig(['--state-dir', 's', '--insecure-plaintext', '--metrics-port', bad], {})).join(' ')).toMatch(/--metrics-port/);
      expect(problems(() => parseNcConfig(['--host', '127.0.1.1', '--state-dir', 's', '--insecure-plaintext', '--metrics-port', bad], {})).join(' ')).toMatch(/--metrics-port/);
    }
  });
});

describe('ferry_leader (issue 21)', () => {
  it('reads the replica\'s lease when scraped: 1 while it leads, 0 while it stands by', async () => {
    const m = daemonMetrics('cc', { partition: 'cluster01' });
    let leads = false;
    addLeaderMetric(m, { leading: () => leads });
    const scrape = async () => valueOf(parseProm(await m.registry.metrics()), 'ferry_leader', { daemon: 'cc', partition: 'cluster01' });
    expect(await scrape()).toBe(0);
    leads = true;
    expect(await scrape()).toBe(1);
    leads = false;
    expect(await scrape()).toBe(0);
    m.close();
  });
});
