/**
 * Host HA's probe bookkeeping kept in memory (issue 19). Every health check and BMC power status
 * changes a host's record (the probe's token and deadline, when the next one is due), and writing
 * that made a steady health pass rewrite every host's record: at 2,000 hosts the `ha` section is
 * 1.5 MB (623 bytes per host), written each tick, the largest share of the CLC's CPU in the
 * supervision bench, and as large as etcd's default request limit. None of it needs to survive a
 * restart: a resumed runner re-checks every host's health at once and re-issues what was in flight
 * (`resumed`). So a step that changes only these fields keeps its record here; one that changes
 * anything else (a state, an operation, an owed repair, an alert or transition to log) is written,
 * probe fields included, and the memory copy is dropped.
 */
import type { HostHaRecord } from './hostHaState.js';

/** The fields that only pace probes: never written for themselves. */
export const PROBE_FIELDS: ReadonlySet<string> = new Set<keyof HostHaRecord>(['seq', 'health', 'nextHealthCheckAt', 'powerProbe', 'nextPowerCheckAt']);

/** Whether two records say the same in every field but the probe fields (nested values by content). */
export function sameBesidesProbes(a: HostHaRecord, b: HostHaRecord): boolean {
  if (a === b) return true;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (PROBE_FIELDS.has(k)) continue;
    const x: unknown = (a as unknown as Record<string, unknown>)[k];
    const y: unknown = (b as unknown as Record<string, unknown>)[k];
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/** A memory copy and the stored record it is known to agree with besides probes. */
interface Kept {
  readonly rec: HostHaRecord;
  /** Remembered so that an unchanged store costs no comparison (a describe overlays every host). */
  base: HostHaRecord;
}

/** Records ahead of the store in their probe fields only, by host. Used under the runner's mailbox. */
export class ProbeOverlay {
  private readonly live = new Map<string, Kept>();

  /**
   * The record to step from, given the stored one: the memory copy while the store says the same
   * besides probes (the store moved on otherwise: a configuration, another replica's term). A
   * stored record is never handed out with a token sequence below one already used, so a late answer
   * to a forgotten probe cannot pass for a new one. Compared once per stored record: the very record
   * the copy was checked against is not compared again (2,000 hosts overlaid for each host a
   * DescribeHostHA named were 38 % of the CLC's CPU in the supervision bench).
   */
  current(stored: HostHaRecord): HostHaRecord {
    const kept = this.live.get(stored.host);
    if (kept === undefined) return stored;
    const live = kept.rec;
    if (kept.base === stored || sameBesidesProbes(live, stored)) {
      kept.base = stored;
      return live.seq >= stored.seq ? live : { ...live, seq: stored.seq };
    }
    return live.seq > stored.seq ? { ...stored, seq: live.seq } : stored;
  }

  /** Whether a step from `stored` to `next` must be written: it logs something, or changes more than probe fields. */
  static mustWrite(stored: HostHaRecord, next: HostHaRecord, logsSomething: boolean): boolean {
    return logsSomething || !sameBesidesProbes(next, stored);
  }

  /** Keeps `next` (ahead of `stored`, the record it was stepped from, in probe fields only) for its host. */
  keep(next: HostHaRecord, stored: HostHaRecord): void {
    this.live.set(next.host, { rec: next, base: stored });
  }

  /** Drops a host's memory copy: what was written (or the store moved on) is the record now. */
  drop(host: string): void {
    this.live.delete(host);
  }

  /** `hosts` (the stored records) with every memory copy that still applies in place of its record. */
  overlaid(hosts: Readonly<Record<string, HostHaRecord>>): Record<string, HostHaRecord> {
    const out = { ...hosts };
    for (const host of this.live.keys()) {
      const stored = hosts[host];
      if (stored !== undefined) out[host] = this.current(stored);
    }
    return out;
  }

  get size(): number {
    return this.live.size;
  }
}
