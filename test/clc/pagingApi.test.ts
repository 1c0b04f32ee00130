/**
 * EC2 paging through the HTTP pipeline: DescribeInstances and DescribeTags walked page by page as
 * the SDKs' paginators walk them (same parameters, each NextToken sent back), across launches,
 * terminations and a CLC restart; every string as NextToken gives a page or InvalidPaginationToken.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { openClcStore } from '../../clc/state/clcStore.js';
import { twoZoneCloud } from './fakeClusters.js';
import { errorCode, harness, items, launchRunning, query, type Harness } from './harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface InstancePage { reservations: [string, string[]][]; nextToken?: string }

async function instancesPage(h: Harness, params: Record<string, string>): Promise<InstancePage> {
  const r = await query(h.app, { Action: 'DescribeInstances', ...params });
  expect(r.status, r.text).toBe(200);
  const body = r.doc.DescribeInstancesResponse;
  const reservations = items(body.reservationSet).map((res): [string, string[]] => [res.reservationId, items(res.instancesSet).map((i) => i.instanceId)]);
  return { reservations, ...(body.nextToken !== undefined ? { nextToken: body.nextToken as string } : {}) };
}

const idsOf = (p: InstancePage): string[] => p.reservations.flatMap(([, ids]) => ids);

/** What botocore's paginator does: the same parameters each time, plus the last NextToken. */
async function walk(h: Harness, params: Record<string, string>, between?: (page: number) => Promise<void>): Promise<InstancePage[]> {
  const pages: InstancePage[] = [];
  let token: string | undefined;
  do {
    const page = await instancesPage(h, { ...params, ...(token !== undefined ? { NextToken: token } : {}) });
    pages.push(page);
    token = page.nextToken;
    if (token !== undefined) await between?.(pages.length);
  } while (token !== undefined);
  return pages;
}

/** Twelve running instances in three reservations of four (two in cluster01, one in cluster02). */
async function twelve(h: Harness): Promise<string[]> {
  return [
    ...await launchRunning(h, 'cluster01', 'm1.small', 4),
    ...await launchRunning(h, 'cluster01', 'm1.small', 4),
    ...await launchRunning(h, 'cluster02', 'm1.small', 4),
  ];
}

describe('DescribeInstances paging', () => {
  it('MaxResults=5 walks 5, 5, 2 in DescribeInstances\' order; a reservation split across pages is on both', async () => {
    const h = await harness();
    const ids = await twelve(h);
    const all = idsOf(await instancesPage(h, {}));
    expect(all).toEqual(ids);
    const pages = await walk(h, { MaxResults: '5' });
    expect(pages.map(idsOf)).toEqual([ids.slice(0, 5), ids.slice(5, 10), ids.slice(10)]);
    expect(pages.map((p) => p.reservations.map(([r, list]) => `${r}:${list.length}`))).toEqual([
      ['r-00000001:4', 'r-00000006:1'], ['r-00000006:3', 'r-0000000b:2'], ['r-0000000b:2'],
    ]);
    expect(pages.map((p) => p.nextToken !== undefined)).toEqual([true, true, false]);
  });

  it('a page that ends exactly at the last instance has no nextToken; without MaxResults, none at all', async () => {
    const h = await harness();
    await launchRunning(h, 'cluster01', 'm1.small', 5);
    expect((await instancesPage(h, { MaxResults: '5' })).nextToken).toBeUndefined();
    expect((await instancesPage(h, {})).nextToken).toBeUndefined();
  });

  it('a NextToken without MaxResults: everything after its position', async () => {
    const h = await harness();
    const ids = await twelve(h);
    const first = await instancesPage(h, { MaxResults: '5' });
    const rest = await instancesPage(h, { NextToken: first.nextToken as string });
    expect(idsOf(rest)).toEqual(ids.slice(5));
    expect(rest.nextToken).toBeUndefined();
  });

  it('filters apply before paging, and the same filters go with every page', async () => {
    const h = await harness();
    const ids = await twelve(h);
    const filter = { 'Filter.1.Name': 'availability-zone', 'Filter.1.Value.1': 'cluster01', MaxResults: '5' };
    const pages = await walk(h, filter);
    expect(pages.map(idsOf)).toEqual([ids.slice(0, 5), ids.slice(5, 8)]);
    // The filters' order and the order of their values do not matter.
    const reordered = { 'Filter.1.Name': 'instance-state-name', 'Filter.1.Value.1': 'running', 'Filter.1.Value.2': 'pending', 'Filter.2.Name': 'availability-zone', 'Filter.2.Value.1': 'cluster01' };
    const p1 = await instancesPage(h, { 'Filter.1.Name': 'availability-zone', 'Filter.1.Value.1': 'cluster01', 'Filter.2.Name': 'instance-state-name', 'Filter.2.Value.1': 'pending', 'Filter.2.Value.2': 'running', MaxResults: '5' });
    expect(idsOf(await instancesPage(h, { ...reordered, NextToken: p1.nextToken as string }))).toEqual(ids.slice(5, 8));
  });

  it('an instance launched, or one gone for good, between pages neither repeats nor shifts another off a page', async () => {
    const h = await harness();
    const ids = await twelve(h);
    let late: string[] = [];
    const pages = await walk(h, { MaxResults: '5' }, async (page) => {
      if (page !== 1) return;
      h.clock.advance(1000);
      late = await launchRunning(h, 'cluster02', 'm1.small', 1);
      // One already served and one still to come disappear: their node forgot them and so did the CLC.
      for (const gone of [ids[2], ids[7]] as string[]) {
        h.clusters.dropInstance(gone);
        await h.store.update((d) => { delete d.instances[gone]; });
      }
    });
    const seen = pages.flatMap(idsOf);
    // An offset would now skip ids[5]; the cursor (the last instance served) does not.
    expect(seen).toEqual([...ids.slice(0, 5), ...ids.slice(5).filter((id) => id !== ids[7]), ...late]);
  });

  it('a token outlives a CLC restart: the key is in clc.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-paging-restart-'));
    dirs.push(dir);
    const cloud = twoZoneCloud();
    const first = await harness({ clusters: cloud, store: await openClcStore(dir) });
    const ids = await twelve(first);
    const page1 = await instancesPage(first, { MaxResults: '5' });
    const second = await harness({ clusters: cloud, store: await openClcStore(dir) });
    const page2 = await instancesPage(second, { MaxResults: '5', NextToken: page1.nextToken as string });
    expect(idsOf(page2)).toEqual(ids.slice(5, 10));
  });

  it('a token lasts 24 hours', async () => {
    const h = await harness();
    await twelve(h);
    const page1 = await instancesPage(h, { MaxResults: '5' });
    h.clock.advance(24 * 3600 * 1000);
    expect((await instancesPage(h, { MaxResults: '5', NextToken: page1.nextToken as string })).reservations).not.toEqual([]);
    h.clock.advance(1);
    const r = await query(h.app, { Action: 'DescribeInstances', MaxResults: '5', NextToken: page1.nextToken as string });
    expect([r.status, errorCode(r)]).toEqual([400, 'InvalidPaginationToken']);
    expect(r.doc.Response.Errors.Error.Message).toContain('expired');
  });

  it('any string as NextToken: a page or InvalidPaginationToken, never another error', async () => {
    const h = await harness();
    await twelve(h);
    const page1 = await instancesPage(h, { MaxResults: '5' });
    const token = page1.nextToken as string;
    const candidates = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ maxLength: 40, unit: 'binary' }),
      fc.tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 2 })).map(([at, s]) => token.slice(0, at % token.length) + s + token.slice((at % token.length) + 1)),
      fc.constant(token),
    );
    await fc.assert(fc.asyncProperty(candidates, async (t) => {
      const r = await query(h.app, { Action: 'DescribeInstances', MaxResults: '5', NextToken: t });
      if (r.status === 200) expect(t === token || t === '').toBe(true);
      else expect([r.status, errorCode(r)]).toEqual([400, 'InvalidPaginationToken']);
    }), { numRuns: 60 });
  });
});

describe('DescribeTags paging', () => {
  it('walks every tag once, in (resource id, key) order; its token is refused by DescribeInstances', async () => {
    const h = await harness();
    const ids = await twelve(h);
    const tags: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const r = await query(h.app, { Action: 'DescribeTags', MaxResults: '5', ...(token !== undefined ? { NextToken: token } : {}) });
      expect(r.status, r.text).toBe(200);
      const body = r.doc.DescribeTagsResponse;
      tags.push(...items(body.tagSet).map((t) => `${t.resourceId} ${t.key}`));
      if (body.nextToken !== undefined && pages === 0) {
        const cross = await query(h.app, { Action: 'DescribeInstances', NextToken: body.nextToken });
        expect(errorCode(cross)).toBe('InvalidPaginationToken');
      }
      token = body.nextToken;
      pages++;
    } while (token !== undefined);
    expect(tags).toEqual([...ids].sort().map((id) => `${id} euca:node`));
    expect(pages).toBe(3);
  });
});
