/**
 * QuarantineNode / UnquarantineNode through the admin API (issue 18), over the fake CCs: every
 * class of bad input gets its coded error and changes nothing (no change reaches a CC); a quarantine
 * answers with the node's new state and shows in DescribeServices and DescribeNodes; a release leaves
 * the node disabled; both are admin-only.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_ONLY } from '../../clc/api/authorization.js';
import { FakeClusters } from './fakeClusters.js';
import { harness, items, query } from './harness.js';

const A = '127.0.12.11';
const code = (r: { doc: Record<string, unknown> }): string => ((r.doc as { Response?: { Errors?: { Error?: { Code?: string } } } }).Response?.Errors?.Error?.Code ?? '');

const cloud = (): FakeClusters => new FakeClusters({
  cluster01: [{ host: A }, { host: '127.0.12.12' }, { host: '127.0.12.13', reachable: false }],
  cluster02: [{ host: '127.0.12.21' }],
});

describe('QuarantineNode / UnquarantineNode: bad input changes nothing', () => {
  const long = 'x'.repeat(257);
  const cases: [string, Record<string, string>, number, string, ((f: FakeClusters) => void)?][] = [
    ['neither Host nor ServiceId', { Action: 'QuarantineNode' }, 400, 'MissingParameter'],
    ['Host and ServiceId both', { Action: 'QuarantineNode', Host: A, ServiceId: `arn:euca:eucalyptus:cluster01:node:${A}/` }, 400, 'InvalidParameterCombination'],
    ['a malformed Host', { Action: 'QuarantineNode', Host: 'node-1' }, 400, 'InvalidParameterValue'],
    ['a ServiceId of a cluster', { Action: 'QuarantineNode', ServiceId: 'arn:euca:eucalyptus:cluster01:cluster:cluster01/' }, 400, 'InvalidParameterValue'],
    ['a Partition differing from ServiceId\'s', { Action: 'QuarantineNode', ServiceId: `arn:euca:eucalyptus:cluster01:node:${A}/`, Partition: 'cluster02' }, 400, 'InvalidParameterCombination'],
    ['an unknown Partition', { Action: 'QuarantineNode', Host: A, Partition: 'nowhere' }, 400, 'InvalidAvailabilityZone'],
    ['a Reason too long', { Action: 'QuarantineNode', Host: A, Reason: long }, 400, 'InvalidParameterValue'],
    ['a Reason with a control character', { Action: 'QuarantineNode', Host: A, Reason: 'a\u0007b' }, 400, 'InvalidParameterValue'],
    ['an unknown parameter', { Action: 'QuarantineNode', Host: A, Force: 'true' }, 400, 'UnknownParameter'],
    ['a Reason on UnquarantineNode', { Action: 'UnquarantineNode', Host: A, Reason: 'x' }, 400, 'UnknownParameter'],
    ['an unknown node', { Action: 'QuarantineNode', Host: '127.0.12.99' }, 400, 'InvalidHost.NotFound'],
    ['a node in another partition than named', { Action: 'QuarantineNode', Host: A, Partition: 'cluster02' }, 400, 'InvalidHost.NotFound'],
    ['a node whose NC does not answer', { Action: 'QuarantineNode', Host: '127.0.12.13' }, 503, 'ServiceUnavailable'],
    ['a node already quarantined', { Action: 'QuarantineNode', Host: A }, 409, 'NodeQuarantined', (f) => { f.node(A)!.quarantine = { since: 1, reason: 'earlier' }; f.node(A)!.nodeState = 'disabled'; }],
    ['lifting a quarantine the node does not hold', { Action: 'UnquarantineNode', Host: A }, 409, 'NodeNotQuarantined'],
  ];
  it.each(cases)('%s', async (_n, params, status, expected, prepare) => {
    const clusters = cloud();
    prepare?.(clusters);
    const h = await harness({ clusters });
    const before = clusters.snapshot();
    const storeBefore = JSON.stringify(h.store.read());
    const r = await query(h.app, params);
    expect(r.status, r.text).toBe(status);
    expect(code(r)).toBe(expected);
    expect(clusters.snapshot()).toBe(before);
    expect(JSON.stringify(h.store.read())).toBe(storeBefore);
  });

  it('both are admin-only', () => {
    expect(ADMIN_ONLY.has('QuarantineNode')).toBe(true);
    expect(ADMIN_ONLY.has('UnquarantineNode')).toBe(true);
  });
});

describe('QuarantineNode / UnquarantineNode', () => {
  it('quarantines with a reason, exclusive in the partition, and every describe shows it', async () => {
    const clusters = cloud();
    const h = await harness({ clusters });
    const r = await query(h.app, { Action: 'QuarantineNode', Host: A, Reason: 'ssh keys changed' });
    expect(r.status, r.text).toBe(200);
    const body = r.doc.QuarantineNodeResponse;
    expect(body).toMatchObject({ previousState: 'enabled', previousQuarantined: 'false', node: { quarantined: 'true', quarantineReason: 'ssh keys changed', state: 'DISABLED' } });
    expect(body.node.quarantinedSince).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(items(body.serviceStatuses)[0]).toMatchObject({ localState: 'DISABLED' });
    expect(JSON.stringify(items(body.serviceStatuses)[0].details)).toContain('reason: ssh keys changed');
    expect(clusters.mutatingCalls().map((c) => `${c.partition}:${c.op}`)).toEqual(['cluster01:ccQuarantineNode']);
    expect(clusters.mutatingCalls()[0]?.req).toMatchObject({ host: A, quarantined: true, reason: 'ssh keys changed' });

    const services = await query(h.app, { Action: 'DescribeServices', ByHost: A });
    const svc = items(services.doc.DescribeServicesResponse.serviceStatuses)[0];
    expect(svc.localState).toBe('DISABLED');
    expect(JSON.stringify(svc.details)).toContain('quarantined by an administrator since');
    const nodes = await query(h.app, { Action: 'DescribeNodes', ByHost: A });
    expect(items(nodes.doc.DescribeNodesResponse.nodeSet)[0]).toMatchObject({ quarantined: 'true', quarantineReason: 'ssh keys changed' });
    const other = await query(h.app, { Action: 'DescribeNodes', ByHost: '127.0.12.12' });
    expect(items(other.doc.DescribeNodesResponse.nodeSet)[0]).toMatchObject({ quarantined: 'false', quarantineReason: '' });
  });

  it('a release by ServiceId leaves the node disabled and says what was lifted', async () => {
    const clusters = cloud();
    const h = await harness({ clusters });
    await query(h.app, { Action: 'QuarantineNode', Host: A, Reason: 'forensics' });
    const r = await query(h.app, { Action: 'UnquarantineNode', ServiceId: `arn:euca:eucalyptus:cluster01:node:${A}/` });
    expect(r.status, r.text).toBe(200);
    expect(r.doc.UnquarantineNodeResponse).toMatchObject({
      previousState: 'disabled', previousQuarantined: 'true', previousQuarantineReason: 'forensics', node: { quarantined: 'false', nodeState: 'disabled', state: 'DISABLED' },
    });
    expect(clusters.node(A)?.nodeState).toBe('disabled');
  });
});
