/**
 * DescribeServices' replicated services (issue 21): the service's own name is the leader (ENABLED, the
 * leader's uri), each other replica a DISABLED standby or a NOTREADY one that does not answer, and the
 * rendered items still carry what Eucalyptus 4's tools read. Table-driven over the pure renderers.
 */
import { describe, expect, it } from 'vitest';
import type { ReplicaAnswer } from '../../../clc/clusters/clusters.js';
import { ClcErrors } from '../../../clc/core/errors.js';
import type { Leadership } from '../../../clc/core/leadership.js';
import { clcReplicaStatuses, clusterReplicaStatuses, replicaServiceName } from '../../../clc/api/render/replicaServices.js';
import { serviceStatusItem } from '../../../clc/api/render/serviceItems.js';
import { resolveServiceName } from '../../../clc/core/services.js';

const A = 'https://127.0.0.1:8784';
const B = 'https://127.0.0.2:8785';
const C = 'https://127.0.0.3:8786';
const PATH = '/services/Eucalyptus';
const down = ClcErrors.make('ServiceUnavailable', { detail: 'connection refused' });

const standby = (url: string, leaderUrl?: string): ReplicaAnswer => ({ url, report: { partition: 'cluster01', self: url, leading: false, ...(leaderUrl ? { leaderUrl } : {}) } });
const leading = (url: string, epoch: string): ReplicaAnswer => ({ url, report: { partition: 'cluster01', self: url, leading: true, leaderUrl: url, epoch } });
const silent = (url: string): ReplicaAnswer => ({ url, failure: down });

/** name state uri, one per service, for compact expectations. */
const rows = (s: ReturnType<typeof clusterReplicaStatuses>): string[] => s.map((x) => `${x.name} ${x.state} ${x.uri ?? ''}`);

describe('replicaServiceName', () => {
  it.each([
    ['cluster01', A, 'cluster01@127.0.0.1-8784'],
    ['clc', 'http://127.0.0.9:8773', 'clc@127.0.0.9-8773'],
    ['clc', 'http://localhost', 'clc@localhost-80'],
    ['cluster01', 'https://[::1]:8774', 'cluster01@--1-8774'],
  ])('%s at %s is %s, a name a full name can carry', (service, url, name) => {
    expect(replicaServiceName(service, url)).toBe(name);
    expect(name).toMatch(/^[^:/]+$/);
  });

  it('names no service the admin actions act on (EnableService etc. refuse it as unknown)', () => {
    expect(resolveServiceName(replicaServiceName('cluster01', A), ['cluster01'])).toBeUndefined();
    expect(resolveServiceName(replicaServiceName('clc', A), ['cluster01'])).toBeUndefined();
  });
});

describe('clusterReplicaStatuses', () => {
  it.each<[string, ReplicaAnswer[], string[]]>([
    ['the first leads', [leading(A, '7'), standby(B, A)],
      [`cluster01 ENABLED ${A}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.2-8785 DISABLED ${B}/axis2/services/EucalyptusCC`]],
    ['the second leads after a takeover; the first is gone', [silent(A), leading(B, '12')],
      [`cluster01 ENABLED ${B}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.1-8784 NOTREADY ${A}/axis2/services/EucalyptusCC`]],
    ['two say they lead (a handover\'s overlap): the newer epoch is the leader', [leading(A, '7'), leading(B, '12'), standby(C, B)],
      [`cluster01 ENABLED ${B}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.1-8784 DISABLED ${A}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.3-8786 DISABLED ${C}/axis2/services/EucalyptusCC`]],
    ['none leads, the named leader does not answer', [silent(A), standby(B, A)],
      [`cluster01 NOTREADY ${A}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.2-8785 DISABLED ${B}/axis2/services/EucalyptusCC`]],
    ['none leads, none named (an election under way)', [standby(A), standby(B)],
      [`cluster01 NOTREADY ${A}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.2-8785 DISABLED ${B}/axis2/services/EucalyptusCC`]],
    ['nobody answers', [silent(A), silent(B)],
      [`cluster01 NOTREADY ${A}/axis2/services/EucalyptusCC`, `cluster01@127.0.0.2-8785 NOTREADY ${B}/axis2/services/EucalyptusCC`]],
  ])('%s', (_, answers, expected) => {
    const s = clusterReplicaStatuses('cluster01', answers, undefined);
    expect(rows(s)).toEqual(expected);
    for (const x of s) expect(x).toMatchObject({ type: 'cluster', partition: 'cluster01' });
  });

  it('the leader entry says so with its epoch; a standby names the leader; a silent one says why', () => {
    const [main, standbyB, silentC] = clusterReplicaStatuses('cluster01', [leading(A, '7'), standby(B, A), silent(C)], undefined);
    expect(main?.host).toBe('127.0.0.1');
    expect(main?.details).toEqual(['the leader of 3 CC replicas (epoch 7)']);
    expect(standbyB?.details[0]).toContain(`the leader is ${A}`);
    expect(silentC?.details[0]).toContain('connection refused');
  });

  it('the leader is NOTREADY when the partition\'s node listing failed, with that failure', () => {
    const [main] = clusterReplicaStatuses('cluster01', [leading(A, '7'), standby(B, A)], down);
    expect(main?.state).toBe('NOTREADY');
    expect(main?.details).toContain(down.message);
  });
});

function leadership(o: { self: string; leading: boolean; leaderUrl?: string; replicas?: string[] }): Leadership {
  return {
    self: o.self, leading: () => o.leading, leaderUrl: () => o.leaderUrl, epoch: () => (o.leading ? '5' : undefined),
    ...(o.replicas ? { replicas: () => o.replicas as string[] } : {}),
  };
}

describe('clcReplicaStatuses', () => {
  const origin = 'http://127.0.0.1:8773';

  it('a single CLC (no replicas) is one ENABLED clc at its origin, as before', () => {
    for (const l of [undefined, leadership({ self: 'this CLC', leading: true })]) {
      expect(clcReplicaStatuses(origin, PATH, l)).toEqual([{
        type: 'eucalyptus', partition: 'eucalyptus', name: 'clc', host: '127.0.0.1', uri: `${origin}${PATH}`, state: 'ENABLED', details: [],
      }]);
    }
  });

  it.each<[string, Parameters<typeof leadership>[0], string[]]>([
    ['asked at the leader', { self: A, leading: true, leaderUrl: A, replicas: [A, B, C] },
      [`clc ENABLED ${A}${PATH}`, `clc@127.0.0.2-8785 DISABLED ${B}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['asked at a follower, after a takeover', { self: C, leading: false, leaderUrl: B, replicas: [B, C] },
      [`clc ENABLED ${B}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['asked at a follower whose own key etcd has not shown yet', { self: C, leading: false, leaderUrl: A, replicas: [A] },
      [`clc ENABLED ${A}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['no leader elected', { self: B, leading: false, replicas: [B, C] },
      [`clc NOTREADY ${B}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
  ])('%s', (_, l, expected) => {
    expect(rows(clcReplicaStatuses(origin, PATH, leadership(l)))).toEqual(expected);
  });

  it.each<[string, Parameters<typeof leadership>[0], [string, boolean][], string[]]>([
    ['at a follower, the leader killed (its key not yet expired): NOTREADY under clc', { self: C, leading: false, leaderUrl: A, replicas: [A, C] }, [[A, false]],
      [`clc NOTREADY ${A}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['at a follower, the leader answers: ENABLED as ever', { self: C, leading: false, leaderUrl: A, replicas: [A, C] }, [[A, true]],
      [`clc ENABLED ${A}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['at the leader, a silent standby: NOTREADY', { self: A, leading: true, leaderUrl: A, replicas: [A, B, C] }, [[B, false], [C, true]],
      [`clc ENABLED ${A}${PATH}`, `clc@127.0.0.2-8785 NOTREADY ${B}${PATH}`, `clc@127.0.0.3-8786 DISABLED ${C}${PATH}`]],
    ['the replica asked is never reported silent, even when told so', { self: A, leading: true, leaderUrl: A, replicas: [A] }, [[A, false]],
      [`clc ENABLED ${A}${PATH}`]],
  ])('%s', (_, l, probed, expected) => {
    const s = clcReplicaStatuses(origin, PATH, leadership(l), new Map(probed));
    expect(rows(s)).toEqual(expected);
    if (s[0]?.state === 'NOTREADY') expect(s[0].details[0]).toBe(`the leader ${A} does not answer (it keeps its election key until its lease runs out; then another replica is elected)`);
  });

  it('renders as Eucalyptus 4\'s ServiceStatusType: the leader keeps clc\'s full name and uuid across a takeover', () => {
    const before = serviceStatusItem(clcReplicaStatuses(origin, PATH, leadership({ self: A, leading: true, leaderUrl: A, replicas: [A, B] }))[0]!);
    const after = serviceStatusItem(clcReplicaStatuses(origin, PATH, leadership({ self: B, leading: true, leaderUrl: B, replicas: [B] }))[0]!);
    expect(before.serviceId).toMatchObject({ name: 'clc', type: 'eucalyptus', fullName: 'arn:euca:eucalyptus:eucalyptus:eucalyptus:clc/', uri: `${A}${PATH}`, host: '127.0.0.1' });
    expect(after.serviceId).toMatchObject({ name: 'clc', uri: `${B}${PATH}`, host: '127.0.0.2' });
    expect((after.serviceId as { uuid: string }).uuid).toBe((before.serviceId as { uuid: string }).uuid);
    expect(after.localState).toBe('ENABLED');
  });
});
