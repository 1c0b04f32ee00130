/**
 * Issue 18's invariant for quarantine, from each NC's durable store: **no instance lands on a
 * quarantined node**. When a node's store first shows a quarantine (by its `since`), the live
 * instance records it holds then are remembered; for as long as that quarantine holds, the store may
 * hold no Incoming record (no migration onto it) and no live instance record outside that set (no
 * placement, no restart, no arrival). A lost store ends the memory (its quarantine is lost with it).
 */
import type { Violation } from './invariants.js';
import type { HostTruth } from './truth.js';

/** Per host: the quarantine's `since`, and the ids it held when the quarantine was first seen. */
export type QuarantineMemory = Map<string, { readonly since: number; readonly held: ReadonlySet<string> }>;

export function checkQuarantineStep(truth: readonly HostTruth[], memory: QuarantineMemory): Violation[] {
  const out: Violation[] = [];
  for (const t of truth) {
    const q = t.nc?.quarantine;
    if (!t.nc || q === undefined) {
      memory.delete(t.host);
      continue;
    }
    const live = Object.values(t.nc.instances).filter((r) => r.phase !== 'terminated').map((r) => r.instanceId);
    let seen = memory.get(t.host);
    if (seen?.since !== q.since) {
      seen = { since: q.since, held: new Set(live) };
      memory.set(t.host, seen);
    }
    const landed = live.filter((id) => !seen.held.has(id));
    if (landed.length > 0) out.push({ invariant: '8 quarantine', detail: `${t.host} is quarantined but took ${landed.join(',')}` });
    const incoming = Object.keys(t.nc.incoming);
    if (incoming.length > 0) out.push({ invariant: '8 quarantine', detail: `${t.host} is quarantined but holds incoming ${incoming.join(',')}` });
  }
  return out;
}
