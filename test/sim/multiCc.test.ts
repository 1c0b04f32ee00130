/**
 * 1 CLC, 1..k CCs: the seed splits its hosts into partitions, each behind its own CC, and the
 * workload, the faults and the invariants follow each host to its own CC.
 */
import { describe, expect, it } from 'vitest';
import { runSeed, settingsFor } from '../../sim/runSeed.js';
import { splitClusters, hostName } from '../../sim/settings.js';
import { failures } from './sweep.js';

/** A seed whose cloud has two CCs and whose run has migrations and activity checks in both partitions. */
const TWO_CCS = 80;

describe('simulated clouds with several CCs', () => {
  it.each([[3, 3, 1], [4, 2, 2], [5, 3, 2], [6, 3, 3], [6, 1, 1]])('%i hosts asked for %i CCs get %i, each partition with two hosts or more', (n, asked, k) => {
    const hosts = Array.from({ length: n }, hostName);
    const clusters = splitClusters(hosts, asked);
    expect(clusters.map((c) => c.cc)).toEqual(['cc', 'cc2', 'cc3'].slice(0, k));
    expect(clusters.map((c) => c.partition)).toEqual(['sim01', 'sim02', 'sim03'].slice(0, k));
    expect(clusters.flatMap((c) => c.hosts)).toEqual(hosts);
    for (const c of clusters) expect(c.hosts.length).toBeGreaterThanOrEqual(2);
  });

  it('the seed picks one CC in about half of the seeds, and several in the rest', () => {
    const counts = [0, 0, 0, 0];
    for (let seed = 1; seed <= 400; seed++) counts[settingsFor(seed).clusters.length]! += 1;
    expect(counts[1]).toBeGreaterThan(150);
    expect(counts[2]).toBeGreaterThan(50);
    expect(counts[3]).toBeGreaterThan(0);
    expect(settingsFor(TWO_CCS, 1).clusters).toHaveLength(1);
  });

  it('a two-CC seed holds every invariant, and both partitions migrate and run host HA through their own CC', async () => {
    // One CC per partition (the seed's own draw runs two replicas of each: test/sim/ccReplicas.test.ts).
    const settings = settingsFor(TWO_CCS, undefined, undefined, 1);
    expect(settings.clusters).toHaveLength(2);
    const r = await runSeed(TWO_CCS, { settings, collectTrace: true });
    expect(failures(r)).toEqual([]);
    for (const { cc, partition, hosts } of settings.clusters) {
      const mine = (line: string): boolean => hosts.some((h) => line.includes(`${cc}->${h} `));
      // Migration orders go from this CC to this partition's NCs only.
      expect(r.trace.filter((l) => l.includes(' ncMigrateInstances delivered') && l.includes(` ${cc}->`)).every(mine)).toBe(true);
      expect(r.trace.some((l) => l.includes(' ncMigrateInstances delivered') && mine(l))).toBe(true);
      expect(r.trace.some((l) => l.endsWith(`admin EnableHAForCluster ${partition} ok`))).toBe(true);
      // Host HA checked a host's activity in this partition, through this partition's CC.
      expect(r.trace.some((l) => l.includes(`clc->${cc} ccCheckHostActivity delivered`))).toBe(true);
      expect(r.trace.some((l) => l.includes(' ncCheckActivity delivered') && mine(l))).toBe(true);
    }
  });

  it('a three-CC seed holds every invariant', async () => {
    const seed = Array.from({ length: 200 }, (_, i) => i + 1).find((s) => settingsFor(s).clusters.length === 3);
    expect(seed).toBeDefined();
    const r = await runSeed(seed as number, { collectTrace: true });
    expect(failures(r)).toEqual([]);
    expect(r.trace.some((l) => l.endsWith('cc3 started (#1)'))).toBe(true);
  });
});
