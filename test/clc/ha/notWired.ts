/**
 * For tests: an HA provider and service actions that wire nothing (no health or activity checks,
 * no DisableService/MigrateInstances/evacuate): every host is ineligible, so the machine never
 * checks, recovers or fences anything by itself, while the admin API's HA actions still work
 * (configuration, enable/disable, suspension, describe, dry run). The running CLC wires the real
 * ones (clc/ha/haRuntime.ts).
 */
import type { HaProvider, HaServiceActions } from '../../../clc/ha/haProvider.js';

export const HA_NOT_WIRED_REASON = 'HA provider not configured';

const refuse = (what: string): Promise<never> => Promise.reject(new Error(`${what}: ${HA_NOT_WIRED_REASON}`));

export function notWiredHa(): { provider: HaProvider; actions: HaServiceActions } {
  return {
    provider: {
      isEligible: () => Promise.resolve({ eligible: false, reason: HA_NOT_WIRED_REASON }),
      isHealthy: () => Promise.resolve({ healthy: false, detail: HA_NOT_WIRED_REASON }),
      hasActivity: () => Promise.resolve({ outcome: 'unknown', detail: HA_NOT_WIRED_REASON }),
      recover: () => refuse('power cycle'),
      fence: () => refuse('fence'),
      powerStatus: () => Promise.resolve({ power: 'unknown', detail: HA_NOT_WIRED_REASON }),
    },
    actions: {
      disableHost: () => refuse('DisableService'),
      drain: () => refuse('drain'),
      evacuate: () => refuse('evacuate'),
      powerOn: () => refuse('power-on'),
    },
  };
}
