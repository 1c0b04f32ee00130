/**
 * Issue 20's status page end to end: a real cloud on 127.0.78.0/24 (3 hosts), Debian's Chromium
 * driven by playwright-core, headless. Without a session there is no data and a wrong secret is a
 * coded refusal; logged in, the page follows a real drain live (a migration's progress rising,
 * seen by watching the DOM, then the source going DISABLED) and keeps a screenshot in
 * test-artifacts/. Everything the page loads comes from the CLC.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';
import { adminCall, placeOn, setNodeState } from '../helpers/cloudApi.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const ARTIFACTS = join(ROOT, 'test-artifacts');

// Slow enough to watch: 256 MiB guests over 100 Mbit/s while they dirty 6 MiB/s converge in ~8
// pre-copy rounds (~43 s of model time; ×0.6 ≈ 26 s each), one at a time from the source: each
// percentage stays on the page for seconds, plenty for a 1 s poll on a busy machine.
const cloud = new TestCloud(78, 3, {
  simArgs: ['--time-scale', '0.6', '--bandwidth-mbps', '100', '--dirty-rate-mibps', '6', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000', '--max-migrations-per-source', '1'],
});
const [n1] = cloud.nodeHosts as [string, string, string];
const origin = new URL(cloud.url).origin;

/**
 * Run in the page (browser JavaScript, kept as text: the tests' TypeScript has no DOM types). Records
 * every distinct percentage each migrating instance's progress bar shows, as the page redraws.
 */
const RECORD_PROGRESS = `(() => {
  const seen = (window.seen = {});
  const record = () => {
    for (const p of document.querySelectorAll('#migrations tr[data-state="migrating"] progress[data-percent]')) {
      const id = p.closest('tr').dataset.instance;
      const v = p.dataset.percent === '' ? NaN : Number(p.dataset.percent);
      if (id === undefined || Number.isNaN(v)) continue;
      const list = (seen[id] ??= []);
      if (list[list.length - 1] !== v) list.push(v);
    }
  };
  new MutationObserver(record).observe(document.getElementById('migrations'), { childList: true, subtree: true, attributes: true });
})()`;

/**
 * In the page: an instance shown at some percentage in (0, 100) and later at a larger one, or false.
 * A function, not text: the page's Content-Security-Policy (no 'unsafe-eval') refuses text predicates.
 */
function progressRose(): { id: string; values: number[] } | false {
  const seen = (globalThis as unknown as { seen: Record<string, number[]> }).seen;
  for (const [id, values] of Object.entries(seen)) {
    const mid = values.filter((v) => v > 0 && v < 100);
    if (mid.length >= 2 && mid[mid.length - 1]! > mid[0]!) return { id, values };
  }
  return false;
}

let browser: Browser;
let admin: Credentials;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no ${CHROMIUM}: run scripts/status-page.sh install (Debian's chromium package)`);
  await cloud.start();
  admin = await readCredentialsFile(cloud.credentialsFile());
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await cloud.destroy();
});

/** A fresh browser context (its own cookies) whose every request is recorded. */
async function openPage(width = 1280): Promise<{ context: BrowserContext; page: Page; requested: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  return { context, page, requested };
}

async function logIn(page: Page, secret: string): Promise<void> {
  await page.goto(`${origin}/status`);
  await page.fill('#access-key', admin.accessKey);
  await page.fill('#secret-key', secret);
  await page.click('button[type=submit]');
}

describe('status page in a browser', () => {
  it('gives no data without a session, and answers a wrong secret with a coded error', async () => {
    const api = await fetch(`${origin}/status/api/summary`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('StatusSessionRequired');

    const { context, page } = await openPage();
    try {
      await logIn(page, `${admin.secretKey}x`);
      await page.waitForSelector('#login-error[data-code]');
      expect(await page.getAttribute('#login-error', 'data-code')).toBe('StatusLoginFailed');
      expect(await page.textContent('#login-error')).toContain('StatusLoginFailed');
      expect(await context.cookies()).toEqual([]);
      // Still the login form: the page and its data stay out of reach.
      await page.goto(`${origin}/status`);
      expect(await page.locator('#nodes').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('shows a real drain live: progress rising, then the node DISABLED; keeps a screenshot', async () => {
    const ids = await placeOn(cloud, n1, 2);
    const { context, page, requested } = await openPage();
    try {
      await logIn(page, admin.secretKey);
      await page.waitForSelector(`#nodes tr[data-host="${n1}"][data-state="ENABLED"]`);
      const cookies = await context.cookies();
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([['ferry_status', true, 'Strict', '/status']]);
      expect(await page.evaluate('document.cookie')).toBe('');

      // Every percentage the page ever shows, per instance, recorded as the DOM changes.
      await page.evaluate(RECORD_PROGRESS);
      const r = await adminCall(cloud, { Action: 'MigrateInstances', SourceHost: n1 });
      const migrationId = r.migrationId as string;
      await page.waitForSelector(`#migrations article[data-migration="${migrationId}"]`);

      // Progress moves: one instance shown at some percentage in (0, 100), later at a larger one.
      const rising = await page.waitForFunction(progressRose, undefined, { timeout: 90_000, polling: 'raf' });
      const { id, values } = (await rising.jsonValue()) as { id: string; values: number[] };
      expect(ids).toContain(id);
      console.log(`status page: ${id} shown at ${values.join('% → ')}%`);

      // The operator takes the source out of service while it drains; the page follows.
      await setNodeState(cloud, n1, false);
      await page.waitForSelector(`#nodes tr[data-host="${n1}"][data-state="DISABLED"]`, { timeout: 30_000 });
      mkdirSync(ARTIFACTS, { recursive: true });
      const during = join(ARTIFACTS, 'status-page.png');
      await page.screenshot({ path: during, fullPage: true });
      console.log(`status page screenshot (drain in flight, node DISABLED): ${during}`);

      await page.waitForSelector(`#finished article[data-migration="${migrationId}"][data-status="completed"]`, { timeout: 120_000 });
      await page.waitForSelector(`#nodes tr[data-host="${n1}"][data-state="DISABLED"]`);
      const after = join(ARTIFACTS, 'status-page-done.png');
      await page.screenshot({ path: after, fullPage: true });
      console.log(`status page screenshot (drain completed): ${after}`);
      expect(existsSync(during) && existsSync(after)).toBe(true);

      // Nothing came from anywhere but the CLC.
      expect(requested.length).toBeGreaterThan(0);
      expect(requested.filter((u) => !u.startsWith(`${origin}/status`))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('works in a narrow window: nothing wider than the screen, progress and capacity labelled', async () => {
    const { context, page } = await openPage(380);
    try {
      await logIn(page, admin.secretKey);
      await page.waitForSelector(`#nodes tr[data-host="${n1}"]`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      const unlabelled = await page.evaluate<number>("[...document.querySelectorAll('meter, progress')].filter((e) => !e.getAttribute('aria-label')).length");
      expect(unlabelled).toBe(0);
      expect(await page.locator('h1').count()).toBe(1);
      expect(await page.locator('#nodes th[scope=col]').count()).toBeGreaterThan(5);
      mkdirSync(ARTIFACTS, { recursive: true });
      const narrow = join(ARTIFACTS, 'status-page-narrow.png');
      await page.screenshot({ path: narrow, fullPage: true });
      console.log(`status page screenshot (380 px wide): ${narrow}`);
    } finally {
      await context.close();
    }
  });
});
