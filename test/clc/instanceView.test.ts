import { describe, expect, it } from 'vitest';
import { liveInstances, mergeInstances } from '../../clc/core/instanceView.js';
import type { InstanceRecord } from '../../clc/state/clcStore.js';
import type { CcInstance } from '../../shared/protocol/ccProtocol.js';

const small = { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 };

function record(id: string, over: Partial<InstanceRecord> = {}): InstanceRecord {
  return {
    instanceId: id, reservationId: 'r-00000001', ownerId: '000000000000', imageId: 'emi-00000001', vmType: 'm1.small',
    partition: 'cluster01', launchTime: 1000, launchIndex: 0, phase: 'launched', ...over,
  };
}

function live(id: string, over: Partial<CcInstance> = {}): CcInstance {
  return {
    instanceId: id, reservationId: 'r-00000001', ownerId: '000000000000', imageId: 'emi-00000001', vmType: small,
    state: 'running', hypervisorState: 'running', launchTime: 1000, migrationState: 'none', host: '127.0.12.11', partition: 'cluster01', ...over,
  };
}

describe('mergeInstances', () => {
  const rows: {
    name: string;
    records: InstanceRecord[];
    live: [string, CcInstance[]][];
    shown: Record<string, string>;
    unknown?: string[];
    incomplete?: string[];
  }[] = [
    { name: 'live data wins over the record', records: [record('i-00000001')], live: [['cluster01', [live('i-00000001', { state: 'running' })]]], shown: { 'i-00000001': 'running' } },
    { name: 'a launched record no answering CC reports is terminated', records: [record('i-00000001')], live: [['cluster01', []]], shown: { 'i-00000001': 'terminated' } },
    { name: 'a requested record no CC reports was never acknowledged', records: [record('i-00000001', { phase: 'requested' })], live: [['cluster01', []]], shown: {} },
    { name: 'a requested record the CC reports is shown', records: [record('i-00000001', { phase: 'requested' })], live: [['cluster01', [live('i-00000001', { state: 'pending' })]]], shown: { 'i-00000001': 'pending' } },
    { name: 'a record in a partition that did not answer is unknown', records: [record('i-00000001', { partition: 'cluster02' })], live: [['cluster01', []]], shown: {}, unknown: ['i-00000001'] },
    { name: 'a launched record an incomplete answer does not report is unknown, not terminated (it may run on the node the CC cannot see)',
      records: [record('i-00000001')], live: [['cluster01', []]], incomplete: ['cluster01'], shown: {}, unknown: ['i-00000001'] },
    { name: 'an incomplete answer still shows what it reports', records: [record('i-00000001')], live: [['cluster01', [live('i-00000001')]]], incomplete: ['cluster01'], shown: { 'i-00000001': 'running' } },
    { name: 'a copy being destroyed never hides a live one, in either order',
      records: [record('i-00000001'), record('i-00000002')],
      live: [['cluster01', [live('i-00000001'), live('i-00000002', { state: 'terminated', host: '127.0.12.12' })]],
        ['cluster02', [live('i-00000001', { state: 'shutting-down', host: '127.0.12.13' }), live('i-00000002')]]],
      shown: { 'i-00000001': 'running', 'i-00000002': 'running' } },
    { name: 'an instance only a CC knows is shown', records: [], live: [['cluster01', [live('i-00000007')]]], shown: { 'i-00000007': 'running' } },
  ];
  it.each(rows)('$name', (row) => {
    const merged = mergeInstances(Object.fromEntries(row.records.map((r) => [r.instanceId, r])), new Map(row.live), new Set(row.incomplete ?? []));
    expect(Object.fromEntries(merged.views.map((v) => [v.instanceId, v.state]))).toEqual(row.shown);
    expect([...merged.unknown.keys()]).toEqual(row.unknown ?? []);
  });

  it('takes the launch index from the record and the migration state from the node', () => {
    const merged = mergeInstances(
      { 'i-00000002': record('i-00000002', { launchIndex: 1 }) },
      new Map([['cluster01', [live('i-00000002', { migrationState: 'preparing' })]]]),
    );
    expect(merged.views[0]).toMatchObject({ launchIndex: 1, migration: { state: 'preparing' }, host: '127.0.12.11', reported: true });
  });

  it('sorts by launch time, reservation, launch index', () => {
    const merged = mergeInstances({
      'i-00000003': record('i-00000003', { launchTime: 5, reservationId: 'r-00000002' }),
      'i-00000002': record('i-00000002', { launchTime: 1, launchIndex: 1 }),
      'i-00000001': record('i-00000001', { launchTime: 1, launchIndex: 0 }),
    }, new Map([['cluster01', []]]));
    expect(merged.views.map((v) => v.instanceId)).toEqual(['i-00000001', 'i-00000002', 'i-00000003']);
  });
});

describe('liveInstances', () => {
  it('keeps each partition\'s list and names the partitions whose CC could not see every node', () => {
    const r = liveInstances(new Map([
      ['cluster01', { instances: [live('i-00000001')], complete: true }],
      ['cluster02', { instances: [], complete: false }],
      ['cluster03', { instances: [] }],
    ]));
    expect([...r.live.keys()]).toEqual(['cluster01', 'cluster02', 'cluster03']);
    expect([...r.incomplete]).toEqual(['cluster02']);
  });
});
