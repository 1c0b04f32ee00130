/** Auto-repair policy (clc/ha/repairPolicy.ts): least destructive wins, what each level permits, per-instance plans. */
import { describe, expect, it } from 'vitest';
import { effectiveRepair, permits, planRepairs, type AutoRepair, type RepairAction } from '../../../clc/ha/repairPolicy.js';

describe('effectiveRepair', () => {
  const rows: [(AutoRepair | undefined)[], AutoRepair][] = [
    [[], 'failover'],
    [[undefined, undefined], 'failover'],
    [['migrate', undefined], 'migrate'],
    [[undefined, 'off'], 'off'],
    [['failover', 'migrate'], 'migrate'],
    [['migrate', 'failover'], 'migrate'],
    [['failover', 'off'], 'off'],
  ];
  it.each(rows)('%j → %s', (levels, want) => expect(effectiveRepair(...levels)).toBe(want));
});

describe('permits', () => {
  const rows: [AutoRepair, RepairAction, boolean][] = [
    ['off', 'drain', false], ['off', 'evacuate', false],
    ['migrate', 'drain', true], ['migrate', 'evacuate', false],
    ['failover', 'drain', true], ['failover', 'evacuate', true],
  ];
  it.each(rows)('%s permits %s: %s', (policy, action, want) => expect(permits(policy, action)).toBe(want));
});

describe('planRepairs', () => {
  it('restarts elsewhere only the instances whose policy allows failover, and says why the others stay', () => {
    const plan = planRepairs([
      { instanceId: 'i-00000001' },
      { instanceId: 'i-00000002', policy: 'migrate' },
      { instanceId: 'i-00000003', policy: 'off' },
    ], 'failover', 'evacuate');
    expect(plan.repair).toEqual(['i-00000001']);
    expect(plan.skipped.map((s) => s.instanceId)).toEqual(['i-00000002', 'i-00000003']);
    expect(plan.skipped[0]?.reason).toBe("auto-repair is 'migrate' (instance migrate, cluster failover); evacuate needs 'failover'");
  });

  it('a cluster set to migrate drains but never restarts elsewhere', () => {
    const instances = [{ instanceId: 'i-00000001' }, { instanceId: 'i-00000002', policy: 'failover' as const }];
    expect(planRepairs(instances, 'migrate', 'drain').repair).toEqual(['i-00000001', 'i-00000002']);
    expect(planRepairs(instances, 'migrate', 'evacuate').repair).toEqual([]);
  });
});
