import { describe, expect, it } from 'vitest';
import { deriveState, instanceView, observe, observedState, type Observed } from '../../nc/instanceView.js';
import type { InstancePhase } from '../../nc/ncStore.js';
import type { InstanceState } from '../../shared/protocol/common.js';
import { domain, record } from './fixtures.js';

describe('instance state derivation', () => {
  const table: [InstancePhase, Observed, InstanceState][] = [
    ['pending', 'running', 'pending'],
    ['pending', 'missing', 'pending'],
    ['running', 'running', 'running'],
    ['running', 'paused', 'running'],
    ['running', 'shutoff', 'stopped'],
    ['running', 'crashed', 'stopped'],
    ['running', 'missing', 'stopped'],
    ['running', 'unknown', 'running'],
    ['shutting-down', 'running', 'shutting-down'],
    ['shutting-down', 'missing', 'shutting-down'],
    ['terminated', 'missing', 'terminated'],
    ['terminated', 'running', 'terminated'],
  ];
  it.each(table)('record %s + domain %s → %s', (phase, observed, expected) => {
    expect(deriveState(phase, observed)).toBe(expected);
  });

  it('reports a vanished domain as stopped with hypervisorState missing, never dropping it', () => {
    const obs = observe([domain('i-00000002')], 5);
    const view = instanceView(record('i-00000001', 'running'), observedState(obs, 'i-00000001'));
    expect(view).toMatchObject({ instanceId: 'i-00000001', state: 'stopped', hypervisorState: 'missing', migrationState: 'none' });
  });

  it('says unknown before the hypervisor was ever seen', () => {
    expect(observedState(undefined, 'i-00000001')).toBe('unknown');
  });
});
