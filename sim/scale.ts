/**
 * The scale mode (`npm run sim -- --hosts 2000 --seeds 5`): one cloud of thousands of NCs behind one
 * CC. The shape is drawn from the seed as in the sweep, but the workload and the faults grow with
 * the cloud (about one instance per host at the start, an operation per two hosts, a fault per
 * forty), so every host is polled, many hosts are drained and the invariants are checked over the
 * whole cloud at every step.
 */
import { Prng } from './prng.js';
import { simSettings, type SimSettings } from './settings.js';

/** The largest cloud --hosts accepts (host names run out at 127.0.255.250 anyway). */
export const MAX_HOSTS = 5000;

export function scaleSettings(seed: number, hosts: number): SimSettings {
  const r = Prng.fork(seed, 'shape');
  const base = simSettings(hosts);
  const cores = r.int(2, 6);
  return Object.freeze({
    ...base,
    capacity: { cores, memoryMiB: 256 * cores, diskGiB: 10 * cores },
    limits: { perSource: r.int(1, 3), perDestination: r.int(1, 2), perCluster: r.int(8, 32) },
    maxOps: Math.max(base.maxOps, Math.round(hosts / 2)),
    maxFaults: Math.max(base.maxFaults, Math.round(hosts / 40)),
    // About one instance per host to start with, so drains anywhere find VMs to move.
    earlyRuns: Math.max(base.earlyRuns, Math.round(hosts / 2)),
  });
}
