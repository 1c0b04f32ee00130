/**
 * The cloud's truth as the invariants read it: domains from the powered-on SimHosts, records from
 * what each NC's store made durable (what a crash keeps), never from a process's memory.
 */
import type { DomainInfo } from '../nc/hypervisor/driver.js';
import type { NcSnapshot } from '../nc/ncStore.js';
import type { SimHvSnapshot } from '../nc/hypervisor/sim/hostStore.js';
import type { SimHost } from '../nc/hypervisor/sim/simHost.js';
import type { SimCloud } from './simCloud.js';

export interface HostTruth {
  readonly host: string;
  readonly poweredOn: boolean;
  readonly domains: readonly DomainInfo[];
  /** The NC's durable snapshot (undefined before its first start). */
  readonly nc: NcSnapshot | undefined;
}

const NO_DOMAINS: readonly DomainInfo[] = Object.freeze([]);
/** Each host's last list() and the change count it was read at: most steps change few hosts. */
const listed = new WeakMap<SimHost, { readonly changes: number; readonly domains: readonly DomainInfo[] }>();

function domainsOf(sim: SimHost | undefined): readonly DomainInfo[] {
  if (!sim) return NO_DOMAINS;
  const cached = listed.get(sim);
  if (cached?.changes === sim.changes) return cached.domains;
  const domains = sim.list();
  listed.set(sim, { changes: sim.changes, domains });
  return domains;
}

export function readTruth(cloud: SimCloud): HostTruth[] {
  return [...cloud.nodes.values()].map((n) => ({
    host: n.host,
    poweredOn: n.slot.current !== undefined,
    domains: domainsOf(n.slot.current),
    nc: cloud.disk.read(`nc/${n.host}`) as NcSnapshot | undefined,
  }));
}

/** Domain ids a host's hypervisor has persisted (they come back, shut off, after a power cycle). */
export function persistedDomains(cloud: SimCloud, host: string): string[] {
  const hv = cloud.disk.read(`hv/${host}`) as SimHvSnapshot | undefined;
  return Object.keys(hv?.domains ?? {});
}
