/**
 * StopInstances / StartInstances / RebootInstances through the admin API (issue 18 part 5), over the
 * fake CCs: every class of bad input gets its coded error and changes nothing (no change reaches a
 * CC, the CLC's records stay as they were); stop answers running → stopped and marks the record for
 * host HA, start answers stopped → running and unmarks it, reboot answers return=true.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN_ONLY } from '../../clc/api/authorization.js';
import { FakeClusters } from './fakeClusters.js';
import { harness, items, query } from './harness.js';

const A = '127.0.80.11';
const code = (r: { doc: Record<string, unknown> }): string => ((r.doc as { Response?: { Errors?: { Error?: { Code?: string } } } }).Response?.Errors?.Error?.Code ?? '');

const cloud = (): FakeClusters => new FakeClusters({ cluster01: [{ host: A }, { host: '127.0.80.12' }] });

async function withRunning(n = 2) {
  const clusters = cloud();
  const fenced = new Set<string>();
  const h = await harness({
    clusters,
    haHooks: { beforeEnable: async () => undefined, afterEnable: async () => undefined, fencedHosts: () => fenced },
  });
  const run = await query(h.app, { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: String(n), 'Placement.AvailabilityZone': 'cluster01' });
  const ids = items(run.doc.RunInstancesResponse.instancesSet).map((i) => i.instanceId as string);
  for (const id of ids) clusters.setInstanceState(id, 'running');
  return { h, clusters, ids, fenced };
}

type Prepare = (c: FakeClusters, ids: string[], fenced: Set<string>) => void;
const first = (ids: string[]): string => ids[0] as string;
const migrating: Prepare = (c, ids) => { (c.instance(first(ids)) as { migrationState: string }).migrationState = 'migrating'; };
const paused: Prepare = (c, ids) => { (c.instance(first(ids)) as { paused?: true }).paused = true; };
const state = (s: 'terminated' | 'stopped' | 'pending' | 'shutting-down'): Prepare => (c, ids) => c.setInstanceState(first(ids), s);
const onFenced: Prepare = (c, ids, fenced) => { fenced.add(c.instance(first(ids))?.host as string); };

describe('StopInstances / StartInstances / RebootInstances: bad input changes nothing', () => {
  const cases: [string, (ids: string[]) => Record<string, string>, number, string, Prepare?][] = [];
  for (const action of ['StopInstances', 'StartInstances', 'RebootInstances']) {
    cases.push(
      [`${action}: no InstanceId`, () => ({ Action: action }), 400, 'MissingParameter'],
      [`${action}: a malformed InstanceId`, () => ({ Action: action, 'InstanceId.1': 'vm-1' }), 400, 'InvalidInstanceID.Malformed'],
      [`${action}: an unknown parameter`, (ids) => ({ Action: action, 'InstanceId.1': first(ids), Colour: 'blue' }), 400, 'UnknownParameter'],
      [`${action}: an unknown instance next to a known one`, (ids) => ({ Action: action, 'InstanceId.1': first(ids), 'InstanceId.2': 'i-0000ffff' }), 400, 'InvalidInstanceID.NotFound'],
      [`${action}: a terminated instance`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', state('terminated')],
      [`${action}: a pending instance`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', state('pending')],
      [`${action}: a shutting-down instance`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', state('shutting-down')],
      [`${action}: a migrating instance`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'OperationNotPermitted', migrating],
      [`${action}: a paused instance`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', paused],
      [`${action}: an instance on a host HA fences`, (ids) => ({ Action: action, 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', onFenced],
    );
  }
  cases.push(
    ['RebootInstances: a stopped instance', (ids) => ({ Action: 'RebootInstances', 'InstanceId.1': first(ids) }), 409, 'IncorrectInstanceState', state('stopped')],
    ['StopInstances: Force not a boolean', (ids) => ({ Action: 'StopInstances', 'InstanceId.1': first(ids), Force: 'yes' }), 400, 'InvalidParameterValue'],
    ['StopInstances: Hibernate=true', (ids) => ({ Action: 'StopInstances', 'InstanceId.1': first(ids), Hibernate: 'true' }), 400, 'UnsupportedOperation'],
    ['StopInstances: a migrating instance among running ones', (ids) => ({ Action: 'StopInstances', 'InstanceId.1': ids[1] as string, 'InstanceId.2': first(ids) }), 409, 'OperationNotPermitted', migrating],
  );
  it.each(cases)('%s', async (_n, params, status, expected, prepare) => {
    const { h, clusters, ids, fenced } = await withRunning();
    prepare?.(clusters, ids, fenced);
    const calls = clusters.mutatingCalls().length;
    const before = clusters.snapshot();
    const storeBefore = JSON.stringify(h.store.read());
    const r = await query(h.app, params(ids));
    expect(r.status, r.text).toBe(status);
    expect(code(r)).toBe(expected);
    expect(clusters.mutatingCalls()).toHaveLength(calls);
    expect(clusters.snapshot()).toBe(before);
    expect(JSON.stringify(h.store.read())).toBe(storeBefore);
  });

  it('none is admin-only (EC2 user actions)', () => {
    for (const a of ['StopInstances', 'StartInstances', 'RebootInstances']) expect(ADMIN_ONLY.has(a)).toBe(false);
  });
});

describe('StopInstances / StartInstances / RebootInstances', () => {
  it('stop answers running → stopped and marks the record; a repeat answers stopped; start answers stopped → running and unmarks it', async () => {
    const { h, clusters, ids } = await withRunning();
    const id = first(ids);
    const r = await query(h.app, { Action: 'StopInstances', 'InstanceId.1': id, Force: 'true' });
    expect(r.status, r.text).toBe(200);
    expect(items(r.doc.StopInstancesResponse.instancesSet)[0]).toMatchObject({
      instanceId: id, previousState: { name: 'running', code: '16' }, currentState: { name: 'stopped', code: '80' },
    });
    expect(clusters.mutatingCalls().at(-1)).toMatchObject({ op: 'ccStopInstance', req: { instanceId: id, force: true } });
    expect(h.store.read().instances[id]?.stoppedAt).toBeTypeOf('number');
    const d = await query(h.app, { Action: 'DescribeInstances', 'InstanceId.1': id });
    expect(items(items(d.doc.DescribeInstancesResponse.reservationSet)[0].instancesSet)[0]).toMatchObject({ instanceState: { name: 'stopped' } });

    const again = await query(h.app, { Action: 'StopInstances', 'InstanceId.1': id });
    expect(items(again.doc.StopInstancesResponse.instancesSet)[0]).toMatchObject({ previousState: { name: 'stopped' }, currentState: { name: 'stopped' } });

    const s = await query(h.app, { Action: 'StartInstances', 'InstanceId.1': id });
    expect(s.status, s.text).toBe(200);
    expect(items(s.doc.StartInstancesResponse.instancesSet)[0]).toMatchObject({
      instanceId: id, previousState: { name: 'stopped' }, currentState: { name: 'running' }, nodeHost: clusters.instance(id)?.host,
    });
    expect(h.store.read().instances[id]?.stoppedAt).toBeUndefined();
    expect(clusters.instance(id)?.state).toBe('running');
  });

  it('reboot answers return=true and changes no state', async () => {
    const { h, clusters, ids } = await withRunning();
    const r = await query(h.app, { Action: 'RebootInstances', 'InstanceId.1': first(ids), 'InstanceId.2': ids[1] as string });
    expect(r.status, r.text).toBe(200);
    expect(r.doc.RebootInstancesResponse.return).toBe('true');
    expect(clusters.mutatingCalls().filter((c) => c.op === 'ccRebootInstance').map((c) => (c.req as { instanceId: string }).instanceId)).toEqual(ids);
    expect(ids.map((id) => clusters.instance(id)?.state)).toEqual(['running', 'running']);
  });

  it('DryRun=true answers DryRunOperation and changes nothing', async () => {
    const { h, clusters, ids } = await withRunning();
    const calls = clusters.mutatingCalls().length;
    const r = await query(h.app, { Action: 'StopInstances', 'InstanceId.1': first(ids), DryRun: 'true' });
    expect(code(r)).toBe('DryRunOperation');
    expect(clusters.mutatingCalls()).toHaveLength(calls);
  });
});
