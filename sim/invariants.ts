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

/** Domain states with a QEMU, which hold their resources (nc/hypervisor/sim/hostLedger.ts isLive). */
const LIVE_DOMAIN: ReadonlySet<string> = new Set(['running', 'paused', 'suspended']);

/** What an NC holds on its host: live instance records (not stopped by their user) plus incoming reservations not yet arrived. */
export function committedOn(t: HostTruth, shutOff: ReadonlySet<string> = new Set()): Resources {
  if (!t.nc) return ZERO;
  let used = ZERO;
  const live = new Set<string>();
  for (const r of Object.values(t.nc.instances)) {
    if (r.phase === 'terminated') continue;
    live.add(r.instanceId);
    // Stopped by its user, it holds nothing (nc/usage.ts, as in EC2): its start is admitted afresh.
    if (r.userStopped !== true && !shutOff.has(r.instanceId)) used = addTo(used, r.vmType);
  }
  for (const r of Object.values(t.nc.incoming)) if (!live.has(r.instanceId)) used = addTo(used, r.vmType);
  return used;
}

/** Sums per NC snapshot and per domain list: both are replaced, never mutated, when they change. */
const committedByStore = new WeakMap<object, Resources>();
const heldByDomains = new WeakMap<object, Resources>();

function memo(cache: WeakMap<object, Resources>, key: object | undefined, compute: () => Resources): Resources {
  if (key === undefined) return compute();
  let v = cache.get(key);
  if (v === undefined) {
    v = compute();
    cache.set(key, v);
  }
  return v;
}

export function checkStep(truth: readonly HostTruth[], ledger: Ledger, capacity: Resources): Violation[] {
  const out: Violation[] = [];
  const copies = new Map<string, string[]>();
  const running = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, id: string, host: string): void => {
    const at = m.get(id);
    if (at) at.push(host);
    else m.set(id, [host]);
  };
  for (const t of truth) {
    for (const d of t.domains) {
      add(copies, d.id, t.host);
      if (d.state === 'running') add(running, d.id, t.host);
    }
    // 3: never over-committed, by the NC's records and by the hypervisor's domains. After a lost nc.json the NC
    // re-adopts its users' stopped instances as plain records holding room (docs/SIMULATION.md, known limits):
    // there, records of shut-off domains are left out (on a powered-off host every domain is off: seed 866).
    const lost = ledger.storesLost.has(t.host);
    const off = (): string[] => (t.poweredOn ? t.domains.filter((d) => d.state === 'shutoff').map((d) => d.id) : Object.keys(t.nc?.instances ?? {}));
    const used = lost ? committedOn(t, new Set(off())) : memo(committedByStore, t.nc, () => committedOn(t));
    if (over(used, capacity)) out.push({ invariant: '3 capacity', detail: `${t.host} committed ${JSON.stringify(used)} > ${JSON.stringify(capacity)}` });
    // A shut-off or crashed domain has no QEMU: it holds no cores or memory (the hypervisor's own count).
    const hv = memo(heldByDomains, t.domains, () => t.domains.filter((d) => LIVE_DOMAIN.has(d.state)).reduce((a, d) => addTo(a, d.resources), ZERO));
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

function groupBy<T>(pairs: readonly (readonly [string, T])[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const [k, v] of pairs) {
    const at = m.get(k);
    if (at) at.push(v);
    else m.set(k, [v]);
  }
  return m;
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
  // By instance id, in truth order: one pass instead of a search of every host per instance.
  const withDomain = groupBy(truth.flatMap((t) => [...new Set(t.domains.map((d) => d.id))].map((id) => [id, t] as const)));
  const withRecord = groupBy(truth.flatMap((t) => Object.values(t.nc?.instances ?? {}).filter((r) => r.phase !== 'terminated').map((r) => [r.instanceId, t] as const)));
  const ccListed = groupBy((cc?.instances ?? []).map((i) => [i.instanceId, i] as const));
  for (const id of ledger.live()) {
    if (ledger.lostWithHost.has(id)) continue;
    const where = withDomain.get(id) ?? [];
    const records = withRecord.get(id) ?? [];
    const at = where[0];
    if (where.length !== 1 || !at) {
      out.push({ invariant: '1 settled', detail: `${id} has domains on ${where.map((t) => t.host).join(',') || 'no host'}` });
      continue;
    }
    // A user-stopped instance is not lost: settled, it is shut off in one place with its record saying so (issue 18 part 5).
    const state = at.domains.find((d) => d.id === id)?.state;
    // A lost nc.json forgets the stop's mark (re-adopted as a plain shut-off record): the CLC keeps the user's word.
    const marked = at.nc?.instances[id]?.userStopped === true || ledger.storesLost.has(at.host);
    const power = ledger.power.get(id);
    if (power === 'stopped' && !(state === 'shutoff' && marked)) out.push({ invariant: '1 settled', detail: `${id} was stopped by its user but is ${state ?? '?'} on ${at.host}${marked ? '' : ', its record not stopped'}` });
    // Unsure: also a start that cleared the mark and died before the domain started (an NC crash): shut off, waiting for a retry.
    else if (power !== 'stopped' && state !== 'running' && !(power === 'unsure' && state === 'shutoff')) out.push({ invariant: '1 settled', detail: `${id} is not running on ${at.host}` });
    if (records.length !== 1 || records[0]?.host !== at.host) {
      out.push({ invariant: '1 settled', detail: `${id} runs on ${at.host} but live NC records are on ${records.map((t) => t.host).join(',') || 'no host'}` });
    } else if (at.nc?.instances[id]?.migrationState !== 'none') {
      out.push({ invariant: '1 settled', detail: `${id} on ${at.host} still in migration state ${at.nc?.instances[id]?.migrationState}` });
    }
    const listed = ccListed.get(id) ?? [];
    if (cc && (listed.length !== 1 || listed[0]?.host !== at.host)) {
      out.push({ invariant: '6 cc view', detail: `${id} runs on ${at.host}; the CC lists it on ${listed.map((i) => i.host).join(',') || 'no host'}` });
    }
  }
  for (const id of ledger.terminated) {
    const on = new Set([...(withDomain.get(id) ?? []), ...(withRecord.get(id) ?? [])]);
    const where = truth.filter((t) => on.has(t));
    if (where.length > 0) out.push({ invariant: '1 terminated', detail: `${id} was terminated but lives on ${where.map((t) => t.host).join(',')}` });
  }
  for (const host of cc?.reservedOn ?? []) out.push({ invariant: '6 reservation', detail: `the CC still reserves room on ${host}` });
  return out;
}
