/**
 * An HaProvider put together from its parts (issue 6's KVM-style provider): health and activity come
 * from sources that ask the cloud (the CC for the NC's health, a neighbour NC for activity on shared
 * storage), recovery and fencing from the host's PowerDriver (a fence agent). Eligibility follows the
 * design: no power management, a host in maintenance, or no neighbour to check activity make a host
 * ineligible (a disabled partition is the runner's concern).
 */
import { HaErrors } from './errors.js';
import type { HaHostRef, HaProvider } from './haProvider.js';
import type { ActivityOutcome } from './hostHaState.js';
import type { PowerDriver } from './power/powerDriver.js';

export interface HealthSource {
  isHealthy(ref: HaHostRef, deadline: number): Promise<{ readonly healthy: boolean; readonly detail: string }>;
}

export interface ActivitySource {
  hasActivity(ref: HaHostRef, since: number, deadline: number): Promise<{ readonly outcome: ActivityOutcome; readonly detail: string }>;
}

export interface HostFacts {
  /** Whether the host is in maintenance by an operator's DisableService. */
  inMaintenance(ref: HaHostRef): Promise<boolean>;
  /** How many other hosts of its cluster could check its activity now. */
  neighbours(ref: HaHostRef): Promise<number>;
}

export interface ProviderParts {
  readonly health: HealthSource;
  readonly activity: ActivitySource;
  readonly facts: HostFacts;
  /** The host's power management, or undefined when none is configured. */
  readonly power: (host: string) => PowerDriver | undefined;
}

export function composeProvider(parts: ProviderParts): HaProvider {
  const powerOf = (ref: HaHostRef): PowerDriver => {
    const p = parts.power(ref.host);
    if (!p) throw HaErrors.make('NoPowerManagement', { host: ref.host, detail: 'configure its BMC (ConfigureHAForHost)' });
    return p;
  };
  return {
    async isEligible(ref) {
      if (!parts.power(ref.host)) return { eligible: false, reason: 'no power management configured' };
      if (await parts.facts.inMaintenance(ref)) return { eligible: false, reason: 'host in maintenance' };
      if ((await parts.facts.neighbours(ref)) === 0) return { eligible: false, reason: 'no neighbour to check activity' };
      return { eligible: true, reason: 'eligible' };
    },
    isHealthy: (ref, deadline) => parts.health.isHealthy(ref, deadline),
    hasActivity: (ref, since, deadline) => parts.activity.hasActivity(ref, since, deadline),
    recover: async (ref) => powerOf(ref).reboot(),
    fence: async (ref) => powerOf(ref).off(),
    async powerStatus(ref) {
      const p = parts.power(ref.host);
      if (!p) return { power: 'unknown', detail: 'no BMC configured' };
      const power = await p.status();
      return { power, detail: `the BMC says ${power}` };
    },
  };
}
