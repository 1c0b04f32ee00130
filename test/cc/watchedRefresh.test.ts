/**
 * The keeper's refresh with the node watch (issue 19): while a node's entry is still the NC's last
 * report, a refresh asks the watch whether that report is current and describes only when it is not
 * (or when the watch cannot say). The NCs and the watch are fakes behind their narrow interfaces.
 */
import { describe, expect, it } from 'vitest';
import type { NodeCallOptions } from '../../cc/nodeClient.js';
import type { NodeWatch, WatchOutcome } from '../../cc/nodeWatch.js';
import { applyStarted, initialView } from '../../cc/view.js';
import { ViewKeeper } from '../../cc/viewKeeper.js';
import { ManualClock } from '../../shared/clock.js';
import { ListingVersions } from '../../shared/listingVersions.js';
import { silentLogger } from '../../shared/log.js';
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { FakeNodes, instance, slots } from './fakeNodes.js';

const A = '127.0.114.1';

/** The fake NCs' reports with a version standing for their content, as a real NC's are. */
class VersionedNodes extends FakeNodes {
  readonly versions = new Map<string, ListingVersions>();

  versionOf(host: string, report: NcNode): string {
    let v = this.versions.get(host);
    if (!v) this.versions.set(host, (v = new ListingVersions()));
    return v.versionOf(report);
  }

  override async describe(host: string, opts?: NodeCallOptions): Promise<NcNode> {
    const report = await super.describe(host, opts);
    return { ...report, version: this.versionOf(host, report) };
  }
}

/** A watch answering from the fake NC's current report, or as scripted. */
class FakeWatch implements NodeWatch {
  readonly checks: { host: string; known: string | undefined }[] = [];
  script: WatchOutcome | undefined;

  constructor(private readonly nodes: VersionedNodes) {}

  async check(host: string, known: string | undefined): Promise<WatchOutcome> {
    this.checks.push({ host, known });
    if (this.script) return this.script;
    // The NC's own describe behind the check, not a describe the CC sent (its call is not counted).
    const now = await this.nodes.describe(host).catch(() => undefined).finally(() => this.nodes.calls.pop());
    if (now === undefined) return { kind: 'unavailable', detail: 'the NC is down' };
    return now.version === known ? { kind: 'same' } : { kind: 'report', report: now };
  }

  readonly lost: ((host: string) => void)[] = [];

  onLost(listener: (host: string) => void): void {
    this.lost.push(listener);
  }

  close(): void {}
}

function setup() {
  const nodes = new VersionedNodes();
  nodes.add(A, slots(4));
  const watch = new FakeWatch(nodes);
  const clock = new ManualClock(1_000_000);
  const keeper = new ViewKeeper({ initial: initialView('cluster01', [A]), nodes, clock, logger: silentLogger(), watch });
  const describes = () => nodes.callsOf('describe').length;
  const node = () => keeper.get().entries[0]!.node;
  return { nodes, watch, clock, keeper, describes, node, refresh: () => keeper.refresh(A, 500) };
}

describe('a refresh with the node watch', () => {
  it('asks through the watch: the first time the NC sends its report, then only "still that one" and the node is seen again', async () => {
    const s = setup();
    await s.refresh();
    expect(s.describes()).toBe(0);
    expect(s.watch.checks).toEqual([{ host: A, known: undefined }]);
    expect(s.node()).toMatchObject({ reachable: true, nodeState: 'enabled' });
    const version = s.watch.checks.length;
    s.clock.advance(10_000);
    await s.refresh();
    expect(s.describes()).toBe(0);
    expect(s.watch.checks).toHaveLength(version + 1);
    expect(s.watch.checks.at(-1)?.known).toMatch(/-1$/);
    expect(s.node()).toMatchObject({ reachable: true, lastSeen: 1_010_000 });
    expect(s.keeper.get().entries[0]!.checkedAt).toBe(1_010_000);
  });

  it('the NC\'s report changed (an instance it started on its own): the answer carries it and the view takes it', async () => {
    const s = setup();
    await s.refresh();
    const first = s.watch.checks.length;
    s.nodes.nc(A).instances.push(instance('i-00000001'));
    await s.refresh();
    expect(s.node().instances.map((i) => i.instanceId)).toEqual(['i-00000001']);
    // From the new report on, the check names its version.
    await s.refresh();
    expect(s.watch.checks.slice(first).map((c) => c.known?.replace(/^.*-/, ''))).toEqual(['1', '2']);
    expect(s.describes()).toBe(0);
  });

  it('the watch cannot ask (no connection, an NC from before the watch): the refresh describes', async () => {
    const s = setup();
    s.watch.script = { kind: 'unavailable', detail: 'no watch connection to this NC' };
    await s.refresh();
    await s.refresh();
    expect(s.describes()).toBe(2);
    expect(s.node().reachable).toBe(true);
    // A described report's version is held too: once the watch is back, the check names it.
    s.watch.script = undefined;
    await s.refresh();
    expect(s.describes()).toBe(2);
    expect(s.watch.checks.at(-1)?.known).toMatch(/-1$/);
  });

  it('no answer within the bound: unreachable without a second wait; the next check names no version (the entry is not the report any more)', async () => {
    const s = setup();
    await s.refresh();
    s.watch.script = { kind: 'timeout' };
    await s.refresh();
    expect(s.describes()).toBe(0);
    expect(s.node().reachable).toBe(false);
    s.watch.script = undefined;
    await s.refresh();
    expect(s.watch.checks.at(-1)?.known).toBeUndefined();
    expect(s.node().reachable).toBe(true);
  });

  it('after a change the CC made to the entry (a run it placed), the next check names no version: the NC\'s report replaces the CC\'s guess', async () => {
    const s = setup();
    await s.refresh();
    s.keeper.update(A, (v) => applyStarted(v, A, instance('i-00000002')));
    expect(s.node().instances).toHaveLength(1);
    await s.refresh();
    expect(s.watch.checks.at(-1)?.known).toBeUndefined();
    expect(s.node().instances).toHaveLength(0);
  });

  it('an NC that hangs up its watch is looked at at once while polling, not at its next round', async () => {
    const s = setup();
    s.keeper.startPolling(10_000, 500);
    await s.keeper.idle();
    expect(s.node().reachable).toBe(true);
    s.nodes.nc(A).link = 'down';
    for (const l of s.watch.lost) l(A);
    await s.keeper.idle();
    expect(s.node().reachable).toBe(false);
    await s.keeper.stop();
  });

  it('a lost watch is not a reason to poll for a replica that does not poll (a standby CC)', async () => {
    const s = setup();
    await s.refresh();
    const checks = s.watch.checks.length;
    for (const l of s.watch.lost) l(A);
    await s.keeper.idle();
    expect(s.watch.checks).toHaveLength(checks);
    expect(s.describes()).toBe(0);
  });
});
