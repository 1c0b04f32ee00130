import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyReport, initialView } from '../../cc/view.js';
import { cachedNodes, openViewStore, ViewCacheWriter } from '../../cc/viewCache.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import { instance, slots } from './fakeNodes.js';

const A = '127.0.11.1';
const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ferry-cc-cache-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('view cache (cc.json)', () => {
  it('round-trips the last view as plain versioned JSON, and a restart rebuilds from it as untrusted', async () => {
    const dir = tempDir();
    const writer = new ViewCacheWriter(await openViewStore(dir), silentLogger(), new ManualClock(0));
    const view = applyReport(initialView('cluster01', [A]), A, {
      host: A, nodeState: 'disabled', healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(1), instances: [instance('i-00000001')],
    }, 1234);
    writer.save(initialView('cluster01', [A]));
    writer.save(view); // coalesced: the newest view wins
    await writer.flush();

    const raw = JSON.parse(readFileSync(join(dir, 'cc.json'), 'utf8')) as { kind: string; schemaVersion: number; data: { nodes: unknown[] } };
    expect(raw).toMatchObject({ kind: 'ferry-cc', schemaVersion: 1 });
    expect(raw.data.nodes).toEqual([view.entries[0]?.node]);

    const reopened = await openViewStore(dir);
    const rebuilt = initialView('cluster01', [A, '127.0.11.2'], cachedNodes(reopened.read(), 'cluster01'));
    expect(rebuilt.entries[0]?.node).toMatchObject({ reachable: false, nodeState: 'unknown', lastSeen: 1234, instances: [{ instanceId: 'i-00000001' }] });
    expect(rebuilt.entries[1]?.node.nodeState).toBe('unknown');
    expect(cachedNodes(reopened.read(), 'cluster02')).toEqual([]);
  });

  it('spaces its writes: a change a second after the last write, a node merely seen again half a minute after; flush writes at once', async () => {
    const dir = tempDir();
    const clock = new ManualClock(1_000_000);
    const store = await openViewStore(dir);
    const writer = new ViewCacheWriter(store, silentLogger(), clock);
    const seenAt = (t: number, state: 'enabled' | 'disabled' = 'enabled') => applyReport(initialView('cluster01', [A]), A, {
      host: A, nodeState: state, healthy: true, hypervisor: 'sim', capacity: slots(4), used: slots(0), instances: [],
    }, t);
    const onDisk = async (): Promise<unknown> => (await openViewStore(dir)).read().nodes[0];
    writer.save(seenAt(1)); // the first write starts at once: no timer
    expect(clock.pendingTimers()).toBe(0);
    await writer.flush();
    expect(await onDisk()).toMatchObject({ lastSeen: 1 });

    writer.save(seenAt(2), false); // only seen again: waits for the slow spacing
    expect(clock.nextTimerAt()).toBe(1_000_000 + 30_000);
    writer.save(seenAt(3, 'disabled'), true); // a real change: the one-second spacing
    expect(clock.nextTimerAt()).toBe(1_000_000 + 1000);
    expect(await onDisk()).toMatchObject({ lastSeen: 1 });
    clock.advance(1000);
    await writer.flush();
    expect(await onDisk()).toMatchObject({ lastSeen: 3, nodeState: 'disabled' });

    writer.save(seenAt(4), false);
    expect(clock.nextTimerAt()).toBe(1_001_000 + 30_000);
    await writer.flush(); // shutdown: written now, the timer gone
    expect(await onDisk()).toMatchObject({ lastSeen: 4 });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('refuses a file of another kind or version instead of silently resetting it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'cc.json'), JSON.stringify({ kind: 'ferry-nc', schemaVersion: 1, data: {} }));
    await expect(openViewStore(dir)).rejects.toMatchObject({ code: 'StoreSchemaMismatch' });
    writeFileSync(join(dir, 'cc.json'), JSON.stringify({ kind: 'ferry-cc', schemaVersion: 1, data: { partition: 'x', nodes: [{ host: 'nope' }] } }));
    await expect(openViewStore(dir)).rejects.toMatchObject({ code: 'StoreInvalid' });
  });
});
