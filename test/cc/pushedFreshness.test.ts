/**
 * Issue 19, "changes pushed, not polled": with the NCs pushing every change (ccNodeEvent, sent again
 * until taken), a CC trusts a node's last report for `freshMs` (its daemon: the poll interval plus one
 * NC timeout). Reads of instances, capacity and migrations, and a placement, then ask no NC again;
 * a live look at the nodes (ccDescribeNodes) still asks every node not heard from within FRESH_MS (host
 * HA's health check: within its interval), since a dead NC pushes nothing; data older than freshMs is
 * asked for again.
 * Fake NCs and a ManualClock; counted NC calls, no timing.
 */
import { describe, expect, it } from 'vitest';
import { FRESH_MS } from '../../cc/service.js';
import { SMALL, slots } from './fakeNodes.js';
import { CTX, harness, id, runReq } from './harness.js';

const A = '127.0.11.1';
const B = '127.0.11.2';
const FRESH = 6000;

async function cloud() {
  const h = await harness({ nodes: [[A, slots(4)], [B, slots(4)]], policy: 'greedy', freshMs: FRESH });
  h.fake.calls.length = 0;
  return h;
}
type H = Awaited<ReturnType<typeof cloud>>;
const describes = (h: H): number => h.fake.callsOf('describe').length;

describe('a CC that trusts pushed data for freshMs', () => {
  it.each([
    ['ccDescribeInstances', (h: H) => h.ops.ccDescribeInstances({}, CTX)],
    ['ccDescribeResources', (h: H) => h.ops.ccDescribeResources({ vmTypes: [SMALL] }, CTX)],
    ['ccDescribeMigrations', (h: H) => h.ops.ccDescribeMigrations({}, CTX)],
    ['ccDescribeNodes cached', (h: H) => h.ops.ccDescribeNodes({ cached: true }, CTX)],
  ])('%s asks no NC within freshMs, and every node once it is older', async (_op, read) => {
    const h = await cloud();
    h.clock.advance(FRESH - 1);
    await read(h);
    expect(describes(h)).toBe(0);
    h.clock.advance(1);
    await read(h);
    // A cached read never asks; the others ask both nodes once their data is freshMs old.
    expect(describes(h)).toBe(_op.endsWith('cached') ? 0 : 2);
  });

  it('ccDescribeNodes, a live look, asks every node not heard from within FRESH_MS', async () => {
    const h = await cloud();
    h.clock.advance(FRESH_MS - 1);
    await h.ops.ccDescribeNodes({}, CTX);
    expect(describes(h)).toBe(0);
    h.clock.advance(1);
    await h.ops.ccDescribeNodes({}, CTX);
    expect(describes(h)).toBe(2);
  });

  it('ccDescribeNodes with maxAgeMs (host HA\'s health check: its interval) asks only nodes not heard from within it', async () => {
    const h = await cloud();
    const HEALTH_INTERVAL = 10_000;
    h.clock.advance(HEALTH_INTERVAL - 1);
    await h.ops.ccDescribeNodes({ maxAgeMs: HEALTH_INTERVAL }, CTX);
    expect(describes(h)).toBe(0);
    // B answers a poll now; A's data is then one interval old: only A is asked.
    await h.keeper.refresh(B, 500);
    h.fake.calls.length = 0;
    h.clock.advance(1);
    await h.ops.ccDescribeNodes({ maxAgeMs: HEALTH_INTERVAL }, CTX);
    expect(h.fake.callsOf('describe').map((c) => c.host)).toEqual([A]);
  });

  it('ccDescribeNodes with freshHosts (host HA\'s change of one host) asks only those nodes; the others as the view holds them, stale when older than freshMs', async () => {
    const h = await cloud();
    h.clock.advance(FRESH);
    const { nodes } = await h.ops.ccDescribeNodes({ freshHosts: [A] }, CTX);
    expect(h.fake.callsOf('describe').map((c) => c.host)).toEqual([A]);
    expect(nodes.map((n) => [n.host, n.stale])).toEqual([[A, false], [B, true]]);
    // A node it names that does not answer is shown as last known, stale; still only it is asked.
    h.fake.calls.length = 0;
    h.fake.nc(A).link = 'down';
    h.clock.advance(FRESH_MS);
    const after = await h.ops.ccDescribeNodes({ freshHosts: [A] }, CTX);
    expect(h.fake.callsOf('describe').map((c) => c.host)).toEqual([A]);
    expect(after.nodes.find((n) => n.host === A)).toMatchObject({ reachable: false, stale: true });
  });

  it('a placement within freshMs uses the pushed data without asking first', async () => {
    const h = await cloud();
    h.clock.advance(FRESH / 2);
    await h.ops.ccRunInstances(runReq([id(1)]), CTX);
    // The run went to an NC first: no NC was asked for its report before placing (it re-reads the
    // node it ran on afterwards, in the background).
    expect(h.fake.calls[0]?.op).toBe('run');
    expect(h.fake.calls.filter((c) => c.op === 'describe').map((c) => c.host)).toEqual(h.fake.calls.filter((c) => c.op === 'run').map((c) => c.host));
  });
});
