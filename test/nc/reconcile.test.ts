import { describe, expect, it } from 'vitest';
import { ADOPTED_PLACEHOLDERS, reconcile, type ReconcileNote } from '../../nc/reconcile.js';
import type { DomainInfo } from '../../nc/hypervisor/driver.js';
import type { InstancePhase, InstanceRecord } from '../../nc/ncStore.js';
import { domain, LARGE, record } from './fixtures.js';

const ID = 'i-00000001';
const NOW = 500;

describe('re-adoption (reconcile)', () => {
  // [name, record phase or none, domain or none, resulting phase or 'gone', effects, note kind]
  const cases: [string, InstancePhase | null, DomainInfo | null, InstancePhase | 'gone' | null, string[], ReconcileNote['kind'] | null][] = [
    ['pending with its domain is adopted as running', 'pending', domain(ID), 'running', [], 'adopted'],
    ['pending with a shut-off domain is adopted too', 'pending', domain(ID, 'shutoff'), 'running', [], 'adopted'],
    ['pending without a domain was never acknowledged: dropped', 'pending', null, 'gone', [], 'dropped-unacknowledged'],
    ['running with its domain stays', 'running', domain(ID), 'running', [], null],
    ['running without a domain stays (reported stopped/missing)', 'running', null, 'running', [], null],
    ['shutting-down with a domain: destroy it', 'shutting-down', domain(ID), 'shutting-down', ['destroy'], null],
    ['shutting-down without a domain: terminated', 'shutting-down', null, 'terminated', [], 'termination-completed'],
    ['terminated without a domain stays a tombstone', 'terminated', null, 'terminated', [], null],
    ['terminated with a domain again: destroy it', 'terminated', domain(ID), 'terminated', ['destroy'], 'terminated-domain-present'],
    ['a domain without a record is an orphan, kept', null, domain(ID), null, [], 'orphan-domain'],
  ];
  it.each(cases)('%s', (_name, phase, dom, after, effects, note) => {
    const records: Record<string, InstanceRecord> = phase ? { [ID]: record(ID, phase) } : {};
    const r = reconcile(records, dom ? [dom] : [], NOW);
    if (after === 'gone' || after === null) expect(r.instances[ID]).toBeUndefined();
    else expect(r.instances[ID]?.phase).toBe(after);
    expect(r.effects.map((e) => e.kind)).toEqual(effects);
    expect(r.notes.map((n) => n.kind)).toEqual(note ? [note] : []);
    expect(r.changed).toBe(phase !== null && after !== phase);
  });

  it('does not count a prepared incoming domain as an orphan: its Incoming record holds it', () => {
    const r = reconcile({}, [domain(ID, 'paused')], NOW, { incomingIds: new Set([ID]) });
    expect(r.notes).toEqual([]);
    expect(r.changed).toBe(false);
  });

  it('stamps changed records with now and leaves the input untouched', () => {
    const records = { [ID]: record(ID, 'pending', { since: 1 }) };
    const r = reconcile(records, [domain(ID)], NOW);
    expect(r.instances[ID]?.since).toBe(NOW);
    expect(records[ID]?.phase).toBe('pending');
  });

  it('is idempotent: reconciling its own result changes nothing', () => {
    const records = {
      'i-00000001': record('i-00000001', 'pending'),
      'i-00000002': record('i-00000002', 'pending'),
      'i-00000003': record('i-00000003', 'shutting-down'),
      'i-00000004': record('i-00000004', 'running'),
    };
    const domains = [domain('i-00000001'), domain('i-00000009')];
    const once = reconcile(records, domains, NOW);
    const twice = reconcile(once.instances, domains, NOW + 1);
    expect(twice.changed).toBe(false);
    expect(twice.instances).toEqual(once.instances);
  });
});

describe('re-adoption after a lost store (adoptOrphans)', () => {
  it('a re-adopted record holds the volumes its domain holds, attached (a detach then reaches the domain: sim seed 429)', () => {
    const volume = { volumeId: 'vol-0000000a', device: '/dev/sdf', path: '/shared/volumes/vol-0000000a.img' };
    const d: DomainInfo = { ...domain(ID, 'running', LARGE), volumes: [volume] };
    const r = reconcile({}, [d], NOW, { adoptOrphans: true });
    expect(r.instances[ID]?.volumes).toEqual([{ ...volume, status: 'attached' }]);
    expect(reconcile({}, [domain(ID, 'running', LARGE)], NOW, { adoptOrphans: true }).instances[ID]?.volumes).toBeUndefined();
  });

  it.each([
    ['a running domain gets a running record again', 'running', 'adopted-orphan'],
    ['a shut-off domain too (reported stopped)', 'shutoff', 'adopted-orphan'],
    ['a crashed domain too', 'crashed', 'adopted-orphan'],
    ['a paused domain stays an orphan: it may be an incoming copy whose source still runs it', 'paused', 'orphan-domain'],
  ] as const)('%s', (_n, state, note) => {
    const d = { ...domain(ID, state, LARGE), imageId: 'emi-0000abcd', startedAt: 77 };
    const r = reconcile({}, [d], NOW, { adoptOrphans: true });
    expect(r.notes).toEqual([{ kind: note, id: ID, state }]);
    if (note === 'orphan-domain') {
      expect(r.instances).toEqual({});
      expect(r.changed).toBe(false);
      return;
    }
    expect(r.changed).toBe(true);
    expect(r.instances[ID]).toEqual({
      instanceId: ID, imageId: 'emi-0000abcd', launchTime: 77, phase: 'running', since: NOW, migrationState: 'none', adopted: true,
      reservationId: ADOPTED_PLACEHOLDERS.reservationId, ownerId: ADOPTED_PLACEHOLDERS.ownerId,
      vmType: { name: ADOPTED_PLACEHOLDERS.vmTypeName, cores: 2, memoryMiB: 512, diskGiB: 10 },
    });
  });

  it('leaves records and incoming domains alone, and is idempotent', () => {
    const records = { 'i-00000001': record('i-00000001', 'running') };
    const domains = [domain('i-00000001'), domain('i-00000002'), domain('i-00000003', 'paused')];
    const once = reconcile(records, domains, NOW, { adoptOrphans: true, incomingIds: new Set(['i-00000003']) });
    expect(once.instances['i-00000001']).toBe(records['i-00000001']);
    expect(Object.keys(once.instances).sort()).toEqual(['i-00000001', 'i-00000002']);
    expect(once.notes).toEqual([{ kind: 'adopted-orphan', id: 'i-00000002', state: 'running' }]);
    const twice = reconcile(once.instances, domains, NOW + 1, { adoptOrphans: true, incomingIds: new Set(['i-00000003']) });
    expect(twice.changed).toBe(false);
    expect(twice.notes).toEqual([]);
  });
});
