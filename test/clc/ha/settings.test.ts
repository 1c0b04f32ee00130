/** Host-HA settings (clc/ha/settings.ts): CloudStack defaults, cluster layers, validation at the edge. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_HA_SETTINGS, compileHaSettings } from '../../../clc/ha/settings.js';

describe('compileHaSettings', () => {
  it("defaults to CloudStack's KVM HA values (in ms)", () => {
    const s = compileHaSettings();
    expect(s).toEqual(DEFAULT_HA_SETTINGS);
    expect([s.activityCheckMaxAttempts, s.activityCheckFailureRatio, s.degradedMaxPeriodMs, s.recoverWaitPeriodMs, s.recoverFailureThreshold])
      .toEqual([10, 0.7, 300_000, 600_000, 1]);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('the most specific layer wins: defaults < global < cluster', () => {
    const s = compileHaSettings({ fenceTimeoutMs: 5000, recoverFailureThreshold: 3 }, { fenceTimeoutMs: 7000 });
    expect([s.fenceTimeoutMs, s.recoverFailureThreshold, s.healthCheckTimeoutMs]).toEqual([7000, 3, 10_000]);
  });

  const bad: [string, unknown][] = [
    ['an unknown key', { fenceTimoutMs: 5 }],
    ['a ratio of 1', { activityCheckFailureRatio: 1 }],
    ['a zero timeout', { fenceTimeoutMs: 0 }],
    ['a fractional attempt count', { activityCheckMaxAttempts: 2.5 }],
    ['an initial delay above the interval', { activityCheckInitialDelayMs: 70_000 }],
  ];
  it.each(bad)('refuses %s', (_name, layer) => expect(() => compileHaSettings(layer)).toThrow());
});
