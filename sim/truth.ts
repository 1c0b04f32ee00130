/**
 * The cloud's truth as the invariants read it: domains from the powered-on SimHosts, records from
 * what each NC's store made durable (what a crash keeps), never from a process's memory.
 */
import type { DomainInfo } from '../nc/hypervisor/driver.js';
import type { NcSnapshot } from '../nc/ncStore.js';
import type { SimHvSnapshot } from '../nc/hypervisor/sim/hostStore.js';
import type { SimCloud } from './simCloud.js';

export interface HostTruth {
  readonly host: string;
  readonly poweredOn: boolean;
  readonly domains: readonly DomainInfo[];
  /** The NC's durable snapshot (undefined before its first start). */
  readonly nc: NcSnapshot | undefined;
}

export function readTruth(cloud: SimCloud): HostTruth[] {
  return [...cloud.nodes.values()].map((n) => ({
    host: n.host,
    poweredOn: n.slot.current !== undefined,
    domains: n.slot.current?.list() ?? [],
    nc: cloud.disk.read(`nc/${n.host}`) as NcSnapshot | undefined,
  }));
}

/** Domain ids a host's hypervisor has persisted (they come back, shut off, after a power cycle). */
export function persistedDomains(cloud: SimCloud, host: string): string[] {
  const hv = cloud.disk.read(`hv/${host}`) as SimHvSnapshot | undefined;
  return Object.keys(hv?.domains ?? {});
}
