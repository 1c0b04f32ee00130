/**
 * Issue 18's invariant for volumes (9), every step, from the hypervisors' domains (truth.ts: each
 * domain's volumes are part of its definition) and the simulated storage (simVolumes.ts):
 *  - a volume is held by at most one running copy of an instance, across every host (a live
 *    migration's paused copy, either side of the switch-over, does not count: it does not write);
 *  - a volume DeleteVolume removed from storage is held by no running copy (its disk is gone);
 *  - a host the storage fenced from a volume (host HA's fence before a restart elsewhere) runs no
 *    copy holding it until the volume is granted to it again (an attach routed there, a migration's
 *    connect): a fenced host that rejoins does not get its volumes back.
 * A suspended domain (paused by an administrator) counts as running: it writes again once resumed.
 */
import type { DomainInfo } from '../nc/hypervisor/driver.js';
import type { Violation } from './invariants.js';
import type { HostTruth } from './truth.js';

/** What the storage tells the invariant (SimVolumeStorage has it). */
export interface VolumeStorageTruth {
  readonly removed: ReadonlySet<string>;
  isFenced(volumeId: string, host: string): boolean;
}

/** Per domain list (replaced, never mutated, when it changes): the [volumeId, instanceId] pairs of its writing domains. */
const heldByDomains = new WeakMap<readonly DomainInfo[], readonly (readonly [string, string])[]>();

function writersOf(domains: readonly DomainInfo[]): readonly (readonly [string, string])[] {
  let held = heldByDomains.get(domains);
  if (held === undefined) {
    held = domains.filter((d) => d.state === 'running' || d.state === 'suspended').flatMap((d) => (d.volumes ?? []).map((v) => [v.volumeId, d.id] as const));
    heldByDomains.set(domains, held);
  }
  return held;
}

export function checkVolumeStep(truth: readonly HostTruth[], storage: VolumeStorageTruth): Violation[] {
  const out: Violation[] = [];
  const holders = new Map<string, string[]>();
  for (const t of truth) {
    for (const [volumeId, id] of writersOf(t.domains)) {
      const at = holders.get(volumeId);
      if (at) at.push(`${id} on ${t.host}`);
      else holders.set(volumeId, [`${id} on ${t.host}`]);
      if (storage.removed.has(volumeId)) out.push({ invariant: '9 volume deleted', detail: `${volumeId} was deleted but ${id} on ${t.host} runs with it` });
      if (storage.isFenced(volumeId, t.host)) out.push({ invariant: '9 volume fenced', detail: `${t.host} was fenced from ${volumeId} but ${id} runs there with it` });
    }
  }
  for (const [volumeId, at] of holders) {
    if (at.length > 1) out.push({ invariant: '9 volume twice', detail: `${volumeId} is held by running copies ${at.join(' and ')}` });
  }
  return out;
}
