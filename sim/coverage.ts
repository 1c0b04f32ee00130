/**
 * Which states and transitions of each state machine a run exercised, as seen in the durable NC
 * stores at every step: migration items (source NC), per-instance migration state (source records,
 * destination Incoming records), node maintenance state and instance phases. Counts merge across
 * seeds; `report` lists what was never reached.
 */
import { itemStateSchema } from '../shared/protocol/migrationProtocol.js';
import { nodeStateSchema, type MigrationState } from '../shared/protocol/common.js';
import { instancePhaseSchema } from '../nc/ncStore.js';
import { HA_STATES } from '../clc/ha/hostHaState.js';
import type { HostTruth } from './truth.js';
import type { HaSectionTruth } from './haInvariants.js';

export const MACHINES: Readonly<Record<string, readonly string[]>> = {
  item: itemStateSchema.options,
  // The NC's per-instance migration state (Eucalyptus 3.3): each side uses part of the enum.
  'nc-source': ['none', 'ready', 'migrating', 'cleaning'] satisfies MigrationState[],
  // `migrating` is not among the destination's states: no decision depends on the stream having
  // begun, so the NC keeps `ready` while the VM streams in (docs/SIMULATION.md, "Coverage").
  'nc-incoming': ['preparing', 'ready'] satisfies MigrationState[],
  node: nodeStateSchema.options,
  instance: instancePhaseSchema.options,
  // Host HA's machine per host, from the CLC's durable clc.json.
  'host-ha': HA_STATES,
  // Items whose source asked for a re-issued credential (issue 16 item 8): awaiting it, migrating
  // again with it, and how they ended. An item enters on its first `awaitingCredential`.
  rejoin: ['awaiting', 'migrating', 'cleaning', 'completed', 'rolled-back', 'cancelled'],
};

export type CoverageCounts = Record<string, number>;

export class Coverage {
  private readonly last = new Map<string, string>();
  readonly counts: CoverageCounts = {};

  /** The NC snapshots and HA section last observed: stores replace their snapshot on every write, so identity means unchanged. */
  private lastSnapshots: readonly (object | undefined)[] = [];
  private lastHa: HaSectionTruth | undefined;

  observe(truth: readonly HostTruth[], ha?: HaSectionTruth): void {
    // Most steps (polls, ticks) write no store: then nothing can have changed state.
    if (ha === this.lastHa && truth.length === this.lastSnapshots.length && truth.every((t, i) => t.nc === this.lastSnapshots[i])) return;
    this.lastSnapshots = truth.map((t) => t.nc);
    this.lastHa = ha;
    const seen = new Set<string>();
    const note = (machine: string, key: string, state: string): void => {
      const k = `${machine}|${key}`;
      seen.add(k);
      const before = this.last.get(k);
      if (before === state) return;
      this.last.set(k, state);
      this.bump(`${machine} ${state}`);
      this.bump(`${machine} ${before ?? '∅'} -> ${state}`);
    };
    for (const t of truth) {
      if (!t.nc) continue;
      note('node', t.host, t.nc.nodeState);
      for (const p of Object.values(t.nc.plans)) {
        for (const i of p.items) {
          const key = `${p.migrationId}/${i.instanceId}`;
          const phase = itemPhase(truth, p.migrationId, i.instanceId, i.destination, i.state);
          if (this.last.get(`item|${key}`) !== phase && i.error !== undefined) this.bump(`why ${phase}: ${reasonClass(i.error)}`);
          note('item', key, phase);
          if ((i.credentialGeneration ?? 0) > 0) note('rejoin', key, i.awaitingCredential === true ? 'awaiting' : i.state);
        }
      }
      for (const r of Object.values(t.nc.instances)) {
        note('instance', `${t.host}/${r.instanceId}`, r.phase);
        note('nc-source', `${t.host}/${r.instanceId}`, r.migrationState);
      }
      for (const r of Object.values(t.nc.incoming)) note('nc-incoming', `${t.host}/${r.migrationId}/${r.instanceId}`, r.state);
    }
    for (const r of Object.values(ha?.hosts ?? {})) note('host-ha', r.host, r.state);
    // A record that disappeared ended (e.g. an Incoming that became an instance, a pruned plan).
    for (const [k, state] of this.last) {
      if (seen.has(k)) continue;
      this.last.delete(k);
      this.bump(`${k.slice(0, k.indexOf('|'))} ${state} -> ∅`);
    }
  }

  /** Leadership counts of one run (issue 21): each under `leadership <what>`, summed across seeds. */
  leadership(counts: Readonly<Record<string, number>>): void {
    for (const [k, v] of Object.entries(counts)) if (v > 0) this.counts[`leadership ${k}`] = (this.counts[`leadership ${k}`] ?? 0) + v;
  }

  private bump(key: string): void {
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }
}

/** As the CC derives it: a queued item whose destination holds its Incoming record is preparing or ready. */
function itemPhase(truth: readonly HostTruth[], migrationId: string, instanceId: string, destination: string, state: string): string {
  if (state !== 'queued') return state;
  const rec = truth.find((t) => t.host === destination)?.nc?.incoming[instanceId];
  if (rec?.migrationId !== migrationId) return state;
  return rec.state === 'preparing' ? 'preparing' : 'ready';
}

/** An item's error without ids, hosts and numbers, so equal causes count together. */
function reasonClass(error: string): string {
  return error.replace(/(i|mig|r)-[0-9a-f]{8}/g, '$1-…').replace(/\d+(\.\d+)*/g, 'N').slice(0, 110);
}

export function mergeCoverage(into: CoverageCounts, from: CoverageCounts): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** One block per machine: states reached / all, never-reached states, and every transition seen. */
export function coverageReport(c: CoverageCounts): string {
  const lines: string[] = [];
  for (const [machine, states] of Object.entries(MACHINES)) {
    const reached = states.filter((s) => (c[`${machine} ${s}`] ?? 0) > 0);
    const missing = states.filter((s) => !reached.includes(s));
    const transitions = Object.entries(c).filter(([k]) => k.startsWith(`${machine} `) && k.includes(' -> ')).sort((a, b) => b[1] - a[1]);
    lines.push(`${machine}: ${reached.length}/${states.length} states${missing.length ? ` (never: ${missing.join(', ')})` : ''}, ${transitions.length} transitions`);
    for (const [k, v] of transitions) lines.push(`  ${k.slice(machine.length + 1)}  ×${v}`);
  }
  const leadership = Object.entries(c).filter(([k]) => k.startsWith('leadership '));
  if (leadership.length > 0) {
    lines.push('leadership (CLC and CC replicas):');
    for (const [k, v] of leadership) lines.push(`  ${k.slice('leadership '.length)}  ×${v}`);
  }
  const why = Object.entries(c).filter(([k]) => k.startsWith('why ')).sort((a, b) => b[1] - a[1]);
  lines.push(`why items ended (${why.length} causes):`);
  for (const [k, v] of why) lines.push(`  ${k.slice(4)}  ×${v}`);
  return lines.join('\n');
}
