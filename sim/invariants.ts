/**
 * The invariants of issue 7, checked against the truth (truth.ts) and what callers were told
 * (ledger.ts). `checkStep` runs after every simulated step; `checkSettled` once the healed cloud
 * has had time to finish everything. Each returns violations as one-line descriptions.
 * Host HA's 4 and 5 (fencing, storm bound) are in haInvariants.ts.
 */
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import type { Resources } from '../shared/model/resources.js';
import type { Ledger } from './ledger.js';
import type { HostTruth } from './truth.js';

export interface Violation {
  readonly invariant: string;
  readonly detail: string;
}

function over(used: Resources, cap: Resources): boolean {
  return used.cores > cap.cores || used.memoryMiB > cap.memoryMiB || used.diskGiB > cap.diskGiB;
}

function addTo(a: Resources, b: Resources): Resources {
  return { cores: a.cores + b.cores, memoryMiB: a.memoryMiB + b.memoryMiB, diskGiB: a.diskGiB + b.diskGiB };
}

const ZERO: Resources = { cores: 0, memoryMiB: 0, diskGiB: 0 };

/** What an NC holds on its host: live instance records plus incoming reservations not yet arrived. */
export function committedOn(t: HostTruth): Resources {
  if (!t.nc) return ZERO;
  let used = ZERO;
  const live = new Set<string>();
  for (const r of Object.values(t.nc.instances)) {
    if (r.phase === 'terminated') continue;
    live.add(r.instanceId);
    used = addTo(used, r.vmType);
  }
  for (const r of Object.values(t.nc.incoming)) if (!live.has(r.instanceId)) used = addTo(used, r.vmType);
  return used;
}

export function checkStep(truth: readonly HostTruth[], ledger: Ledger, capacity: Resources): Violation[] {
  const out: Violation[] = [];
  const copies = new Map<string, string[]>();
  const running = new Map<string, string[]>();
  for (const t of truth) {
    for (const d of t.domains) {
      copies.set(d.id, [...(copies.get(d.id) ?? []), t.host]);
      if (d.state === 'running') running.set(d.id, [...(running.get(d.id) ?? []), t.host]);
    }
    // 3: never over-committed, by the NC's records and by the hypervisor's domains.
    const used = committedOn(t);
    if (over(used, capacity)) out.push({ invariant: '3 capacity', detail: `${t.host} committed ${JSON.stringify(used)} > ${JSON.stringify(capacity)}` });
    const hv = t.domains.reduce((a, d) => addTo(a, d.resources), ZERO);
    if (over(hv, capacity)) out.push({ invariant: '3 capacity', detail: `${t.host} hypervisor holds ${JSON.stringify(hv)}` });
    // 7: an acknowledged node state survives every crash (the durable store says so).
    const expected = ledger.nodeState.get(t.host);
    if (expected !== undefined && t.nc && t.nc.nodeState !== expected) {
      out.push({ invariant: '7 node state', detail: `${t.host} acknowledged ${expected}, store says ${t.nc.nodeState}` });
    }
  }
  for (const id of ledger.live()) {
    // 1: never lost (a VM whose host lost power is set aside: Host HA may restart it elsewhere).
    if (!ledger.lostWithHost.has(id) && (copies.get(id) ?? []).length === 0) out.push({ invariant: '1 lost', detail: `${id} exists on no host` });
  }
  for (const [id, hosts] of running) {
    // 2: never running twice (a paused copy during switchover is not running).
    if (hosts.length > 1) out.push({ invariant: '2 twice', detail: `${id} runs on ${hosts.join(' and ')}` });
  }
  return out;
}

/** What the CC believes once things have settled (from its view, as DescribeInstances answers it). */
export interface CcBelief {
  readonly instances: readonly { readonly instanceId: string; readonly host: string }[];
  /** Hosts on which the CC still counts a reservation of some migration. */
  readonly reservedOn: readonly string[];
}

/** After healing: everything finished, nothing left behind, every VM in one place and running. */
export function checkSettled(truth: readonly HostTruth[], ledger: Ledger, cc?: CcBelief): Violation[] {
  const out: Violation[] = [];
  for (const t of truth) {
    for (const d of t.domains) {
      const r = t.nc?.instances[d.id];
      if (d.state === 'running' && (!r || r.phase === 'terminated')) out.push({ invariant: '6 orphan', detail: `${t.host} runs ${d.id} without a live NC record` });
    }
    if (!t.nc) continue;
    for (const r of Object.values(t.nc.instances)) {
      if (r.phase === 'pending' || r.phase === 'shutting-down') out.push({ invariant: '6 leftover', detail: `${t.host} record ${r.instanceId} stuck ${r.phase}` });
    }
    for (const p of Object.values(t.nc.plans)) {
      for (const i of p.items) {
        if (!FINAL_ITEM_STATES.includes(i.state)) out.push({ invariant: '6 liveness', detail: `${p.migrationId} ${i.instanceId} still ${i.state} on ${t.host}` });
      }
    }
    for (const r of Object.values(t.nc.incoming)) {
      out.push({ invariant: '6 leftover', detail: `${t.host} still holds incoming ${r.instanceId} of ${r.migrationId} (${r.state})` });
    }
    for (const d of t.domains) if (d.state === 'paused') out.push({ invariant: '6 leftover', detail: `${t.host} has paused domain ${d.id}` });
  }
  for (const id of ledger.live()) {
    if (ledger.lostWithHost.has(id)) continue;
    const where = truth.filter((t) => t.domains.some((d) => d.id === id));
    const records = truth.filter((t) => {
      const r = t.nc?.instances[id];
      return r !== undefined && r.phase !== 'terminated';
    });
    const at = where[0];
    if (where.length !== 1 || !at) {
      out.push({ invariant: '1 settled', detail: `${id} has domains on ${where.map((t) => t.host).join(',') || 'no host'}` });
      continue;
    }
    if (at.domains.find((d) => d.id === id)?.state !== 'running') out.push({ invariant: '1 settled', detail: `${id} is not running on ${at.host}` });
    if (records.length !== 1 || records[0]?.host !== at.host) {
      out.push({ invariant: '1 settled', detail: `${id} runs on ${at.host} but live NC records are on ${records.map((t) => t.host).join(',') || 'no host'}` });
    } else if (at.nc?.instances[id]?.migrationState !== 'none') {
      out.push({ invariant: '1 settled', detail: `${id} on ${at.host} still in migration state ${at.nc?.instances[id]?.migrationState}` });
    }
    const listed = cc?.instances.filter((i) => i.instanceId === id) ?? [];
    if (cc && (listed.length !== 1 || listed[0]?.host !== at.host)) {
      out.push({ invariant: '6 cc view', detail: `${id} runs on ${at.host}; the CC lists it on ${listed.map((i) => i.host).join(',') || 'no host'}` });
    }
  }
  for (const id of ledger.terminated) {
    const where = truth.filter((t) => t.domains.some((d) => d.id === id) || (t.nc?.instances[id] !== undefined && t.nc.instances[id]?.phase !== 'terminated'));
    if (where.length > 0) out.push({ invariant: '1 terminated', detail: `${id} was terminated but lives on ${where.map((t) => t.host).join(',')}` });
  }
  for (const host of cc?.reservedOn ?? []) out.push({ invariant: '6 reservation', detail: `the CC still reserves room on ${host}` });
  return out;
}
