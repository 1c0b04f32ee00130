/**
 * The invariants of issue 7 (sim/invariants.ts) as the real-process chaos test checks them: from
 * the outside, over what the simhv daemons list (the ground truth: they are never killed), what
 * each NC answers to ncDescribeResource while it is up, and what the admin API answers. Pure: an
 * observation in, one-line violations out.
 *
 * When each is checked (chaos.test.ts takes the observations):
 * - `checkAnytime`, every poll, even while a daemon is down: 1 every acknowledged, not terminated
 *   instance has a domain on at least one hypervisor; 2 no id runs on two hypervisors (a paused
 *   incoming copy is not running); 3 per host, the hypervisor's domains, the NC's own `used`
 *   (instances + incoming reservations) and that plus what the answering source NCs' active plans
 *   still reserve there (the CC's rule, cc/migration/reservations.ts) fit the capacity; 7 an
 *   answering NC reports the node state last acknowledged by Enable/DisableService (hosts with a
 *   request in flight or unanswered are skipped).
 * - `checkSettled`, at a stable point (every daemon up, every node reachable, no partition
 *   unavailable) after the faults stopped: 6 every migration final and nothing reserved anywhere
 *   (no incoming record, no paused domain, each NC's and the CC's `used` = its instances, the CC's
 *   matrix counts no reservation); 1 every live instance runs on exactly one hypervisor, one NC
 *   holds it (migration state none) and DescribeInstances lists it there; terminated ones are gone;
 *   7 DescribeNodes agrees with the acknowledged node states.
 */
import type { NcNode } from '../../shared/protocol/ncProtocol.js';
import { FINAL_ITEM_STATES } from '../../shared/protocol/migrationProtocol.js';
import type { HvDomain } from './cloudApi.js';

export interface Res {
  readonly cores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

export interface HostObservation {
  readonly host: string;
  readonly domains: readonly HvDomain[];
  /** ncDescribeResource's answer; undefined while the NC does not answer. */
  readonly nc?: NcNode;
}

/** What the test knows it was told: instances acknowledged, terminations, node states. */
export interface ChaosLedger {
  readonly live: ReadonlySet<string>;
  readonly terminated: ReadonlySet<string>;
  /** The last acknowledged state per host; absent while a request for that host is in flight or failed. */
  readonly nodeState: ReadonlyMap<string, 'enabled' | 'disabled'>;
}

/** The admin API's answers at a stable point (xml2js items). */
export interface AdminView {
  readonly nodes: readonly any[];
  readonly instances: readonly any[];
  readonly migrations: readonly any[];
  /** DescribeAvailabilityZones verbose: free m1.small slots. */
  readonly smallFree: number;
}

const ZERO: Res = { cores: 0, memoryMiB: 0, diskGiB: 0 };
const add = (a: Res, b: Res): Res => ({ cores: a.cores + b.cores, memoryMiB: a.memoryMiB + b.memoryMiB, diskGiB: a.diskGiB + b.diskGiB });
const over = (a: Res, cap: Res): boolean => a.cores > cap.cores || a.memoryMiB > cap.memoryMiB || a.diskGiB > cap.diskGiB;
const same = (a: Res, b: Res): boolean => !over(a, b) && !over(b, a);
const show = (r: Res): string => `${r.cores}c/${r.memoryMiB}MiB/${r.diskGiB}GiB`;

const push = (m: Map<string, string[]>, k: string, v: string): void => {
  m.set(k, [...(m.get(k) ?? []), v]);
};

/** id → hosts with a domain (any state) and hosts running it. */
function copies(hosts: readonly HostObservation[]): { anywhere: Map<string, string[]>; running: Map<string, string[]> } {
  const anywhere = new Map<string, string[]>();
  const running = new Map<string, string[]>();
  for (const h of hosts) {
    for (const d of h.domains) {
      push(anywhere, d.id, h.host);
      if (d.state === 'running') push(running, d.id, h.host);
    }
  }
  // Sorted, so that a finding reads the same whatever order the hosts were observed in.
  for (const m of [anywhere, running]) for (const on of m.values()) on.sort();
  return { anywhere, running };
}

/** What active plans of answering source NCs reserve per destination, by the CC's rule. */
function pendingReservations(hosts: readonly HostObservation[]): Map<string, Res> {
  const byHost = new Map<string, Res>();
  const ncOf = new Map(hosts.map((h) => [h.host, h.nc]));
  for (const h of hosts) {
    for (const plan of h.nc?.plans ?? []) {
      for (const item of plan.items) {
        if (FINAL_ITEM_STATES.includes(item.state) || item.destination === '') continue;
        const dest = ncOf.get(item.destination);
        // Once the destination holds an Incoming record (or the instance), its own `used` counts it.
        const counted = dest === undefined
          || (dest.incoming ?? []).some((r) => r.migrationId === plan.migrationId && r.instanceId === item.instanceId)
          || dest.instances.some((i) => i.instanceId === item.instanceId && i.state !== 'terminated');
        if (!counted) byHost.set(item.destination, add(byHost.get(item.destination) ?? ZERO, item.vmType));
      }
    }
  }
  return byHost;
}

export function checkAnytime(hosts: readonly HostObservation[], ledger: ChaosLedger, capacity: Res): string[] {
  const out: string[] = [];
  const { anywhere, running } = copies(hosts);
  for (const id of ledger.live) if (!anywhere.has(id)) out.push(`1 lost: ${id} has no domain on any hypervisor`);
  for (const [id, on] of running) if (on.length > 1) out.push(`2 twice: ${id} runs on ${on.join(' and ')}`);
  const pending = pendingReservations(hosts);
  for (const h of hosts) {
    const hv = h.domains.filter((d) => d.state !== 'shutoff').reduce((a, d) => add(a, d.resources), ZERO);
    if (over(hv, capacity)) out.push(`3 capacity: ${h.host} hypervisor holds ${show(hv)} > ${show(capacity)}`);
    if (!h.nc) continue;
    const ncOver = over(h.nc.used, capacity);
    if (ncOver) out.push(`3 capacity: ${h.host} NC used ${show(h.nc.used)} > ${show(capacity)}`);
    const withPlans = add(h.nc.used, pending.get(h.host) ?? ZERO);
    if (!ncOver && over(withPlans, capacity)) out.push(`3 capacity: ${h.host} NC used + plan reservations ${show(withPlans)} > ${show(capacity)}`);
    const acked = ledger.nodeState.get(h.host);
    if (acked !== undefined && h.nc.nodeState !== acked) out.push(`7 node state: ${h.host} acknowledged ${acked}, its NC says ${h.nc.nodeState}`);
  }
  return out;
}

const arr = <T>(x: T | T[] | undefined | ''): T[] => (x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x]);

/** Free slots of `type` on enabled nodes, from capacity and what each NC holds (as resourceMatrix counts). */
export function freeSlots(hosts: readonly HostObservation[], capacity: Res, type: Res): number {
  let free = 0;
  for (const h of hosts) {
    if (h.nc?.nodeState !== 'enabled') continue;
    const left = { cores: capacity.cores - h.nc.used.cores, memoryMiB: capacity.memoryMiB - h.nc.used.memoryMiB, diskGiB: capacity.diskGiB - h.nc.used.diskGiB };
    free += Math.max(0, Math.min(Math.floor(left.cores / type.cores), Math.floor(left.memoryMiB / type.memoryMiB), Math.floor(left.diskGiB / type.diskGiB)));
  }
  return free;
}

export function checkSettled(hosts: readonly HostObservation[], admin: AdminView, ledger: ChaosLedger, capacity: Res, small: Res): string[] {
  const out: string[] = [];
  for (const m of admin.migrations) {
    if (m.state === 'active') out.push(`6 liveness: ${m.migrationId} still active: ${arr<any>(m.itemSet?.item).map((i) => `${i.instanceId} ${i.state}`).join(', ')}`);
  }
  const { anywhere, running } = copies(hosts);
  for (const h of hosts) {
    for (const d of h.domains) if (d.state !== 'running') out.push(`6 leftover: ${h.host} has ${d.state} domain ${d.id}`);
    if (!h.nc) {
      out.push(`stable: ${h.host} NC does not answer`);
      continue;
    }
    for (const r of h.nc.incoming ?? []) out.push(`6 leftover: ${h.host} still holds incoming ${r.instanceId} of ${r.migrationId} (${r.state})`);
    const held = h.nc.instances.filter((i) => i.state !== 'terminated').reduce((a, i) => add(a, i.vmType), ZERO);
    if (!same(held, h.nc.used)) out.push(`6 reservation: ${h.host} NC used ${show(h.nc.used)} but its instances hold ${show(held)}`);
    const row = admin.nodes.find((n) => n.host === h.host);
    const ccUsed: Res | undefined = row && { cores: Number(row.used.cores), memoryMiB: Number(row.used.memoryMiB), diskGiB: Number(row.used.diskGiB) };
    if (!ccUsed || !same(ccUsed, held)) out.push(`6 reservation: DescribeNodes says ${h.host} uses ${ccUsed ? show(ccUsed) : 'nothing'}, its instances hold ${show(held)}`);
    const acked = ledger.nodeState.get(h.host);
    if (acked !== undefined && row?.nodeState !== acked) out.push(`7 node state: ${h.host} acknowledged ${acked}, DescribeNodes says ${row?.nodeState}`);
  }
  const expectedFree = freeSlots(hosts, capacity, small);
  if (admin.smallFree !== expectedFree) out.push(`6 reservation: the matrix offers ${admin.smallFree} m1.small, the enabled nodes have room for ${expectedFree}`);
  for (const id of ledger.live) {
    const on = running.get(id) ?? [];
    const at = on[0];
    if (on.length !== 1 || at === undefined || (anywhere.get(id) ?? []).length !== 1) {
      out.push(`1 settled: ${id} runs on [${on.join(',')}], domains on [${(anywhere.get(id) ?? []).join(',')}]`);
      continue;
    }
    const holders = hosts.filter((h) => h.nc?.instances.some((i) => i.instanceId === id && i.state !== 'terminated'));
    const rec = hosts.find((h) => h.host === at)?.nc?.instances.find((i) => i.instanceId === id);
    if (holders.length !== 1 || holders[0]?.host !== at || rec?.state !== 'running' || rec.migrationState !== 'none') {
      out.push(`1 settled: ${id} runs on ${at}; NC records on [${holders.map((h) => h.host).join(',')}], there ${rec?.state}/${rec?.migrationState}`);
    }
    const listed = admin.instances.filter((i) => i.instanceId === id);
    const li = listed[0];
    if (listed.length !== 1 || li.nodeHost !== at || li.instanceState?.name !== 'running' || li.migrationState !== 'none') {
      out.push(`1 settled: ${id} runs on ${at}; DescribeInstances says ${JSON.stringify(listed.map((i) => [i.nodeHost, i.instanceState?.name, i.migrationState]))}`);
    }
  }
  for (const [id, on] of anywhere) {
    if (ledger.terminated.has(id)) out.push(`1 terminated: ${id} still has domains on ${on.join(',')}`);
    else if (!ledger.live.has(id)) out.push(`6 orphan: ${id} was never acknowledged but has domains on ${on.join(',')}`);
  }
  return out;
}
