import { describe, expect, it } from 'vitest';
import { MATRIX_HEADER, matrixColumns, matrixLabel } from '../../clc/core/matrixText.js';
import { chooseZone } from '../../clc/core/placement.js';
import { invalidFilterValue, serviceFilterPredicate, type FilterableService, type ServiceFilter } from '../../clc/core/serviceFilters.js';
import { isStaleNode, nodeServiceState, parseServiceFullName, resolveServiceName, serviceFullName, serviceUuid, type ServiceRef } from '../../clc/core/services.js';
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
    // Issue 16: a node whose NC did not answer in time keeps its last known state, marked stale.
    ['enabled, stale', { stale: true }, 'ENABLED'],
    ['disabled, stale', { nodeState: 'disabled', stale: true }, 'DISABLED'],
    ['unreachable (stale)', { reachable: false, stale: true }, 'NOTREADY'],
  ] as [string, Partial<CcNode>, string][])('%s → %s', (_n, over, state) => {
    expect(nodeServiceState(node(over)).state).toBe(state);
  });

  it.each([
    ['current', {}, false, []],
    ['stale', { stale: true, lastSeen: Date.UTC(2026, 0, 2, 3, 4, 5) }, true, ['stale: its node controller did not answer the cluster controller in time; last known state, from 2026-01-02T03:04:05.000Z']],
    ['unreachable, from a CC without the mark', { reachable: false }, true, ['the cluster controller cannot reach this node']],
  ] as [string, Partial<CcNode>, boolean, string[]][])('%s: stale %s, details %j', (_n, over, stale, details) => {
    expect(isStaleNode(node(over))).toBe(stale);
    expect(nodeServiceState(node(over)).details).toEqual(details);
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

describe('resolveServiceName', () => {
  const partitions = ['cluster01', 'cluster02'];
  it.each([
    ['the CLC by name', 'clc', { type: 'eucalyptus' }],
    ['the CLC by full name', 'arn:euca:eucalyptus:eucalyptus:eucalyptus:clc/', { type: 'eucalyptus' }],
    ['a cluster by name', 'cluster02', { type: 'cluster', partition: 'cluster02' }],
    ['a cluster by full name', 'arn:euca:eucalyptus:cluster01:cluster:cluster01/', { type: 'cluster', partition: 'cluster01' }],
    ['a node by address: partition unknown', '127.0.12.11', { type: 'node', host: '127.0.12.11' }],
    ['a node by full name', 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/', { type: 'node', host: '127.0.12.11', partition: 'cluster01' }],
    ['an unknown name', 'walrus', undefined],
    ['a name in the wrong case', 'CLC', undefined],
    ['an unknown partition', 'cluster09', undefined],
    ['a full name in an unknown partition', 'arn:euca:eucalyptus:cluster09:node:127.0.12.11/', undefined],
    ['a cluster full name naming another cluster', 'arn:euca:eucalyptus:cluster01:cluster:cluster02/', undefined],
    ['a node full name that is no address', 'arn:euca:eucalyptus:cluster01:node:nc-1/', undefined],
    ['the CLC in a cluster\'s partition', 'arn:euca:eucalyptus:cluster01:eucalyptus:clc/', undefined],
    ['a type Ferry does not have', 'arn:euca:eucalyptus:cluster01:storage:sc-1/', undefined],
  ] as [string, string, ServiceRef | undefined][])('%s', (_n, name, ref) => {
    expect(resolveServiceName(name, partitions)).toEqual(ref);
  });
});

describe('serviceUuid', () => {
  it('is an RFC 4122 version-5 uuid, the same for the same name, different for another', () => {
    const a = serviceUuid('arn:euca:eucalyptus:cluster01:node:127.0.12.11/');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(serviceUuid('arn:euca:eucalyptus:cluster01:node:127.0.12.11/')).toBe(a);
    expect(serviceUuid('arn:euca:eucalyptus:cluster01:node:127.0.12.12/')).not.toBe(a);
  });
});

describe('service filters', () => {
  const clc: FilterableService = { type: 'eucalyptus', partition: 'eucalyptus', host: '127.0.0.1', state: 'ENABLED' };
  const cluster: FilterableService = { type: 'cluster', partition: 'cluster01', host: '127.0.12.200', state: 'NOTREADY' };
  const node: FilterableService = { type: 'node', partition: 'cluster01', host: '127.0.12.11', state: 'DISABLED' };
  const all = [clc, cluster, node];
  const shown = (filters: ServiceFilter[]): string[] => all.filter(serviceFilterPredicate(filters)).map((s) => s.type);
  it.each([
    ['no filter', [], ['eucalyptus', 'cluster', 'node']],
    ['partition', [{ name: 'partition', values: ['cluster01'] }], ['cluster', 'node']],
    ['partition is exact', [{ name: 'partition', values: ['CLUSTER01'] }], []],
    ['host', [{ name: 'host', values: ['127.0.12.200', '127.0.0.1'] }], ['eucalyptus', 'cluster']],
    ['service-type, any case', [{ name: 'service-type', values: ['NODE'] }], ['node']],
    ['state, any case, values OR-ed', [{ name: 'state', values: ['notready', 'Disabled'] }], ['cluster', 'node']],
    ['filters AND-ed', [{ name: 'state', values: ['notready', 'disabled'] }, { name: 'service-type', values: ['node'] }], ['node']],
    ['internal=true', [{ name: 'internal', values: ['true'] }], ['cluster', 'node']],
    ['internal=false', [{ name: 'internal', values: ['False'] }], ['eucalyptus']],
    ['public=true', [{ name: 'public', values: ['TRUE'] }], ['eucalyptus']],
    ['user-service=false', [{ name: 'user-service', values: ['false'] }], ['cluster', 'node']],
    ['both booleans OR-ed', [{ name: 'public', values: ['true', 'false'] }], ['eucalyptus', 'cluster', 'node']],
    ['service-group', [{ name: 'service-group', values: ['user-api'] }], []],
    ['service-group-member=false', [{ name: 'service-group-member', values: ['false'] }], ['eucalyptus', 'cluster', 'node']],
    ['certificate-usage', [{ name: 'certificate-usage', values: ['ssl'] }], []],
  ] as [string, ServiceFilter[], string[]][])('%s', (_n, filters, expected) => {
    expect(shown(filters)).toEqual(expected);
  });

  it.each([
    ['state', 'enabled', false], ['state', 'BROKEN', false], ['state', 'running', true],
    ['internal', 'TRUE', false], ['internal', 'yes', true], ['public', '', true], ['service-group-member', '1', true],
    ['partition', '', false], ['host', 'anything', false], ['service-group', 'x', false],
  ] as [ServiceFilter['name'], string, boolean][])('%s=%j is refused: %s', (name, value, refused) => {
    expect(invalidFilterValue(name, value) !== undefined).toBe(refused);
  });
});
