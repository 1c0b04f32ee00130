/**
 * The HA provider and service actions the CLC uses until the real ones are wired (the CC's relay of
 * health and activity checks, DisableService/MigrateInstances/evacuate): every host is ineligible,
 * so the machine never checks, recovers or fences anything by itself. The admin API still works:
 * configuration, enable/disable, suspension, describe and dry run. Swap `notWiredHa` for the real
 * pair in clc/main.ts.
 */
import type { HaProvider, HaServiceActions } from './haProvider.js';

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
    },
  };
}
