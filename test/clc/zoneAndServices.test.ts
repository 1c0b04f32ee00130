import { describe, expect, it } from 'vitest';
import { MATRIX_HEADER, matrixColumns, matrixLabel } from '../../clc/core/matrixText.js';
import { chooseZone } from '../../clc/core/placement.js';
import { nodeServiceState, parseServiceFullName, serviceFullName } from '../../clc/core/services.js';
import type { CcNode } from '../../shared/protocol/ccProtocol.js';

describe('chooseZone', () => {
  const rows: [string, [string, number][], number, string | undefined][] = [
    ['most free wins', [['a', 3], ['b', 7]], 1, 'b'],
    ['ties go to the earlier zone', [['a', 5], ['b', 5]], 1, 'a'],
    ['zones that cannot fit minCount are skipped', [['a', 9], ['b', 2]], 3, 'a'],
    ['exactly minCount fits', [['a', 2]], 2, 'a'],
    ['nothing fits', [['a', 1], ['b', 0]], 2, undefined],
    ['no zones', [], 1, undefined],
  ];
  it.each(rows)('%s', (_n, zones, min, expected) => {
    expect(chooseZone(zones.map(([partition, available]) => ({ partition, available })), min)).toBe(expected);
  });
});

describe('matrix text', () => {
  it('prints Eucalyptus\'s %04d counts', () => {
    const row = { vmType: 'm1.small', available: 40, max: 40, cores: 1, memoryMiB: 256, diskGiB: 5 };
    expect(`${matrixLabel(row)}\t${matrixColumns(row)}`).toBe('|- m1.small\t0040 / 0040\t1\t256\t5');
    expect(`${MATRIX_HEADER.label}\t${MATRIX_HEADER.columns}`).toBe('|- vm types\tfree / max\tcpu\tram\tdisk');
  });
});

describe('nodeServiceState', () => {
  const node = (over: Partial<CcNode>): CcNode => ({
    host: '127.0.12.11', partition: 'cluster01', nodeState: 'enabled', reachable: true, healthy: true, lastSeen: 1,
    capacity: { cores: 1, memoryMiB: 1, diskGiB: 1 }, used: { cores: 0, memoryMiB: 0, diskGiB: 0 }, instances: [], ...over,
  });
  it.each([
    ['enabled', {}, 'ENABLED'],
    ['disabled', { nodeState: 'disabled' }, 'DISABLED'],
    ['unreachable', { reachable: false }, 'NOTREADY'],
    ['disabled but unreachable', { nodeState: 'disabled', reachable: false }, 'NOTREADY'],
    ['not heard from yet', { nodeState: 'unknown' }, 'NOTREADY'],
    ['hypervisor broken', { healthy: false }, 'NOTREADY'],
  ] as [string, Partial<CcNode>, string][])('%s → %s', (_n, over, state) => {
    expect(nodeServiceState(node(over)).state).toBe(state);
  });
});

describe('service full names', () => {
  it('round-trip', () => {
    const name = serviceFullName('cluster01', 'node', '127.0.12.11');
    expect(name).toBe('arn:euca:eucalyptus:cluster01:node:127.0.12.11/');
    expect(parseServiceFullName(name)).toEqual({ partition: 'cluster01', type: 'node', name: '127.0.12.11' });
  });
  it.each(['', 'arn:euca:eucalyptus:cluster01:node:127.0.12.11', 'arn:aws:ec2:x:node:y/', 'arn:euca:eucalyptus::node:h/'])('refuses %j', (s) => {
    expect(parseServiceFullName(s)).toBeUndefined();
  });
});
