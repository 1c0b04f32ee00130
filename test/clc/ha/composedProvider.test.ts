/** The composed HA provider (clc/ha/composedProvider.ts): eligibility rules and the power path, with hand-written fakes. */
import { describe, expect, it } from 'vitest';
import { composeProvider, type ProviderParts } from '../../../clc/ha/composedProvider.js';
import type { PowerDriver } from '../../../clc/ha/power/powerDriver.js';

function parts(over: { power?: boolean; maintenance?: boolean; neighbours?: number } = {}, calls: string[] = []): ProviderParts {
  const power: PowerDriver = {
    status: async () => 'on',
    on: async () => { calls.push('on'); },
    off: async () => { calls.push('off'); return { alreadyOff: false }; },
    reboot: async () => { calls.push('reboot'); },
  };
  return {
    health: { isHealthy: async () => ({ healthy: true, detail: 'ok' }) },
    activity: { hasActivity: async () => ({ outcome: 'inactive', detail: 'none' }) },
    facts: { inMaintenance: async () => over.maintenance ?? false, neighbours: async () => over.neighbours ?? 2 },
    power: () => (over.power === false ? undefined : power),
  };
}

const ref = { host: '127.0.1.1', partition: 'p1' };

describe('composeProvider', () => {
  const rows: [string, Parameters<typeof parts>[0], boolean, string][] = [
    ['everything in place', {}, true, 'eligible'],
    ['no power management', { power: false }, false, 'no power management configured'],
    ['in maintenance', { maintenance: true }, false, 'host in maintenance'],
    ['no neighbour', { neighbours: 0 }, false, 'no neighbour to check activity'],
  ];
  it.each(rows)('eligibility: %s', async (_name, over, eligible, reason) => {
    expect(await composeProvider(parts(over)).isEligible(ref)).toEqual({ eligible, reason });
  });

  it('recovers by power cycle and fences by power off', async () => {
    const calls: string[] = [];
    const p = composeProvider(parts({}, calls));
    await p.recover(ref, 0);
    expect(await p.fence(ref, 0)).toEqual({ alreadyOff: false });
    expect(calls).toEqual(['reboot', 'off']);
  });

  it('a fence without power management fails (it is never reported as done)', async () => {
    await expect(composeProvider(parts({ power: false })).fence(ref, 0)).rejects.toThrow(/no power management/);
  });
});
