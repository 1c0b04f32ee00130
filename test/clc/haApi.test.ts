/**
 * The host-HA admin actions through the whole HTTP pipeline (fake Clusters, memory stores, the
 * scripted FakeHa or the not-wired provider): each action's response, admin-only, and one test per
 * class of bad input, each checking the code, the status and that neither store changed.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_ONLY } from '../../clc/api/authorization.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { TEST_USER, testAuthenticator } from './authFixtures.js';
import { signedQuery } from './authFixtures.js';
import { FakeHa } from './ha/fakeHa.js';
import { HA_NOT_WIRED_REASON } from './ha/notWired.js';
import { errorCode, harness, items, launchRunning, query, START, type Harness, type QueryReply } from './harness.js';

const N1 = '127.0.12.11';
const N2 = '127.0.12.12';
const SECRET = 'bmc-s3cret';
const HA_ACTIONS = ['ConfigureHAForHost', 'ConfigureHAForCluster', 'ConfigureHAForInstance', 'EnableHAForHost', 'DisableHAForHost', 'EnableHAForCluster', 'DisableHAForCluster',
  'ListHostHAConfigurations', 'DescribeHostHA', 'DescribeHAEvents', 'FenceHost', 'ConfirmHostFenced', 'SuspendHA', 'ResumeHA'];

let h: Harness;
let fake: FakeHa;

beforeEach(async () => {
  fake = new FakeHa();
  h = await harness({ ha: { provider: fake, actions: fake } });
});

const haOf = (x: Harness) => {
  if (!x.ha) throw new Error('harness without HA');
  return x.ha;
};

async function ok(params: Record<string, string>): Promise<Record<string, any>> {
  const r = await query(h.app, params);
  expect(r.text).not.toContain(SECRET);
  if (r.status !== 200) throw new Error(`${params.Action}: ${r.status} ${r.text}`);
  return r.doc[`${params.Action}Response`] as Record<string, any>;
}

const snapshot = () => JSON.stringify([h.store.read(), haOf(h).bmc.read(), h.clusters.snapshot()]);

async function refused(params: Record<string, string>, code: string, status = 400, message?: RegExp): Promise<QueryReply> {
  const before = snapshot();
  const r = await query(h.app, params);
  expect(errorCode(r), r.text).toBe(code);
  expect(r.status).toBe(status);
  expect(ClcErrors.table[code as keyof typeof ClcErrors.table].status).toBe(status);
  if (message) expect(r.doc.Response.Errors.Error.Message).toMatch(message);
  await haOf(h).runner.idle();
  expect(snapshot()).toBe(before);
  return r;
}

const configureN1 = () => ok({ Action: 'ConfigureHAForHost', Host: N1, Agent: 'fence_ipmilan', Address: '127.0.31.1', Port: '6230', Username: 'admin', Password: SECRET });

async function watched(): Promise<void> {
  await configureN1();
  await ok({ Action: 'ConfigureHAForHost', Host: N2 });
  await ok({ Action: 'EnableHAForCluster', Partition: 'cluster01' });
  await haOf(h).runner.evaluateEligibility();
  await haOf(h).runner.tick();
  await haOf(h).runner.idle();
}

describe('host HA actions', () => {
  it('every HA action is in the table and admin-only', async () => {
    for (const action of HA_ACTIONS) {
      expect(ADMIN_ONLY.has(action)).toBe(true);
      const hu = await harness({ authenticator: testAuthenticator });
      const r = await signedQuery(hu.app, { Action: action, Host: N1 }, TEST_USER, START);
      expect(errorCode(r), action).toBe('UnauthorizedOperation');
    }
  });

  it('ConfigureHAForHost finds the node\'s partition, stores the BMC, and answers with passwordSet only', async () => {
    const r = await configureN1();
    expect(r.host).toMatchObject({ host: N1, partition: 'cluster01', state: 'DISABLED', reason: 'HA disabled for the partition', haEnabled: 'false' });
    expect(r.host.bmc).toEqual({ agent: 'fence_ipmilan', address: '127.0.31.1', port: '6230', username: 'admin', timeoutMs: '20000', passwordSet: 'true', sslInsecure: 'false' });
    expect(haOf(h).bmc.read().hosts[N1]?.password).toBe(SECRET);
    expect(JSON.stringify(h.store.read())).not.toContain(SECRET);
    const n22 = await ok({ Action: 'ConfigureHAForHost', Host: '127.0.12.22', Partition: 'cluster02' });
    expect(n22.host).toMatchObject({ partition: 'cluster02' });
    expect(n22.host.bmc).toBeUndefined();
  });

  it('ConfigureHAForHost sets and removes fence_redfish\'s options; the password is kept', async () => {
    const set = await ok({
      Action: 'ConfigureHAForHost', Host: N1, Agent: 'fence_redfish', Address: '127.0.35.1', Port: '16350', Username: 'ferry', Password: SECRET,
      SslInsecure: 'true', SystemsUri: '/redfish/v1/Systems/System.Embedded.1', RedfishUri: '/redfish/v1/',
    });
    expect(set.host.bmc).toMatchObject({ agent: 'fence_redfish', sslInsecure: 'true', systemsUri: '/redfish/v1/Systems/System.Embedded.1', redfishUri: '/redfish/v1/' });
    expect(haOf(h).bmc.read().hosts[N1]?.options).toEqual({
      ip: '127.0.35.1', ipport: '16350', username: 'ferry', ssl_insecure: '1', systems_uri: '/redfish/v1/Systems/System.Embedded.1', redfish_uri: '/redfish/v1/',
    });
    // Off means no ssl_insecure at all: fence_redfish reads ssl_insecure=0 as on.
    const cleared = await ok({ Action: 'ConfigureHAForHost', Host: N1, SslInsecure: 'false', SystemsUri: '', RedfishUri: '' });
    expect(cleared.host.bmc).toEqual({ agent: 'fence_redfish', address: '127.0.35.1', port: '16350', username: 'ferry', timeoutMs: '20000', passwordSet: 'true', sslInsecure: 'false' });
    expect(haOf(h).bmc.read().hosts[N1]).toEqual({ agent: 'fence_redfish', options: { ip: '127.0.35.1', ipport: '16350', username: 'ferry' }, password: SECRET, timeoutMs: 20_000 });
  });

  it('ConfigureHAForCluster and ListHostHAConfigurations: overrides, effective settings, maxUnhealthy, auto-repair', async () => {
    await configureN1();
    const r = await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', FenceTimeoutMs: '45000', ActivityCheckFailureRatio: '0.8', MaxUnhealthy: '1', AutoRepair: 'migrate' });
    const p1 = items(r.partitionSet).find((p) => p.partition === 'cluster01');
    expect(p1).toMatchObject({ enabled: 'false', maxUnhealthy: '1', autoRepair: 'migrate' });
    expect(items(p1.overrideSet)).toEqual([{ name: 'activityCheckFailureRatio', value: '0.8' }, { name: 'fenceTimeoutMs', value: '45000' }]);
    expect(items(p1.settingSet)).toContainEqual({ name: 'recoverFailureThreshold', value: '1' });
    // Cluster API's unhealthyRange, shown beside maxUnhealthy; "none" removes it.
    const ranged = await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', UnhealthyRange: '[2-5]' });
    expect(items(ranged.partitionSet).find((p) => p.partition === 'cluster01')).toMatchObject({ maxUnhealthy: '1', unhealthyRange: '[2-5]' });
    expect(h.store.read().ha.partitions.cluster01?.unhealthyRange).toBe('[2-5]');
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', UnhealthyRange: 'none' });
    expect(h.store.read().ha.partitions.cluster01?.unhealthyRange).toBeUndefined();
    const list = await ok({ Action: 'ListHostHAConfigurations' });
    expect(items(list.partitionSet).map((p) => p.partition)).toEqual(['cluster01', 'cluster02']);
    expect(items(list.hostSet)).toEqual([{ host: N1, partition: 'cluster01', hostDisabled: 'false', bmc: expect.objectContaining({ passwordSet: 'true' }) }]);
    const g = await ok({ Action: 'ConfigureHAForCluster', HealthCheckIntervalMs: '20000' });
    expect(items(g.global.overrideSet)).toEqual([{ name: 'healthCheckIntervalMs', value: '20000' }]);
  });

  it('ConfigureHAForInstance sets, shows and drops an instance\'s auto-repair; the least destructive of it and its cluster\'s applies', async () => {
    const [id] = await launchRunning(h, 'cluster01');
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', AutoRepair: 'migrate' });
    const set = await ok({ Action: 'ConfigureHAForInstance', InstanceId: id ?? '', AutoRepair: 'failover' });
    expect(set).toMatchObject({ instanceId: id, partition: 'cluster01', autoRepair: 'failover', clusterAutoRepair: 'migrate', effectiveAutoRepair: 'migrate' });
    const off = await ok({ Action: 'ConfigureHAForInstance', InstanceId: (id ?? '').toUpperCase().replace('I-', 'i-'), AutoRepair: 'off' });
    expect(off).toMatchObject({ autoRepair: 'off', effectiveAutoRepair: 'off' });
    expect(h.store.read().ha.instanceAutoRepair).toEqual({ [id ?? '']: 'off' });
    expect(items((await ok({ Action: 'ListHostHAConfigurations' })).instanceSet)).toEqual([{ instanceId: id, autoRepair: 'off' }]);
    expect(h.store.read().ha.events.at(-1)?.message).toMatch(new RegExp(`auto-repair of ${id ?? ''} set to off by`));
    const inherit = await ok({ Action: 'ConfigureHAForInstance', InstanceId: id ?? '', AutoRepair: 'inherit' });
    expect(inherit).toMatchObject({ autoRepair: 'inherit', effectiveAutoRepair: 'migrate' });
    expect(h.store.read().ha.instanceAutoRepair).toEqual({});
  });

  it('DisableHAForHost of a FENCING host is refused with its state, and changes nothing', async () => {
    await watched();
    fake.fences.set(N1, 'hang');
    await ok({ Action: 'FenceHost', Host: N1, Force: 'true' });
    // Not refused(): its idle() would wait for the hanging fence.
    const before = snapshot();
    const r = await query(h.app, { Action: 'DisableHAForHost', Host: N1 });
    expect(errorCode(r)).toBe('HostFenceInProgress');
    expect(r.status).toBe(409);
    expect(r.doc.Response.Errors.Error.Message).toMatch(/^Host 127\.0\.12\.11 is FENCING: .*wait for FENCED \(or ConfirmHostFenced/);
    expect(snapshot()).toBe(before);
    fake.release();
    await haOf(h).runner.idle();
    expect(h.store.read().ha.hosts[N1]?.state).toBe('FENCED');
  });

  it('the switches, then FenceHost fences through DisableService; ConfirmHostFenced of a fenced host is refused with its state', async () => {
    await watched();
    const d = await ok({ Action: 'DescribeHostHA' });
    expect(items(d.hostSet).map((x) => [x.host, x.state, x.haEnabled])).toEqual([[N1, 'AVAILABLE', 'true'], [N2, 'AVAILABLE', 'true']]);
    expect(items(d.hostSet)[0].nextHealthCheckAt).toMatch(/^2013-06-01T/);
    const off = await ok({ Action: 'DisableHAForHost', Host: N2 });
    expect(off.host).toMatchObject({ state: 'DISABLED', haEnabled: 'false' });
    // N1 is up and healthy: refused without Force, and nothing changes; with Force it is fenced and the log says who forced it.
    await refused({ Action: 'FenceHost', Host: N1 }, 'HostHealthy', 409, /^Host 127\.0\.12\.11 is up and healthy .*unless Force=true/);
    expect(fake.calls.filter((c) => !c.startsWith('health'))).toEqual([]);
    const f = await ok({ Action: 'FenceHost', Host: N1, Force: 'true' });
    expect(f.host.state).toBe('FENCING');
    expect(h.store.read().ha.events.some((e) => e.host === N1 && e.to === 'FENCING' && /^FenceHost by \S+, forced \(the host was up and healthy\)$/.test(e.message))).toBe(true);
    await haOf(h).runner.idle();
    expect(fake.calls.filter((c) => !c.startsWith('health'))).toEqual([`disable ${N1}`, `fence ${N1}`, `evacuate ${N1} (agent)`]);
    await refused({ Action: 'ConfirmHostFenced', Host: N1 }, 'IncorrectHostHAState', 409, /Host 127\.0\.12\.11 is FENCED/);
    await refused({ Action: 'FenceHost', Host: N2 }, 'IncorrectHostHAState', 409, /is DISABLED/);
    const c = await ok({ Action: 'DisableHAForCluster', Partition: 'cluster01' });
    expect(c).toMatchObject({ partition: 'cluster01', enabled: 'false' });
    // Switching HA off does not abandon the fenced host: it stays FENCED until EnableService returns it.
    expect(items(c.hostSet).map((x) => [x.state, x.haEnabled])).toEqual([['FENCED', 'false'], ['DISABLED', 'false']]);
  });

  it('a failed fence: DescribeHostHA DryRun says it waits for an operator; ConfirmHostFenced fences it', async () => {
    await watched();
    fake.fences.set(N1, 'fail');
    await ok({ Action: 'FenceHost', Host: N1, Force: 'true' });
    await haOf(h).runner.idle();
    const d = await ok({ Action: 'DescribeHostHA', 'Host.1': N1, DryRun: 'true', MaxEvents: '3' });
    const x = items(d.hostSet)[0];
    expect(x).toMatchObject({ state: 'FENCING', needsOperator: 'true', fenceAttempts: '1' });
    expect(x.dryRun).toMatchObject({ waitsForOperator: 'true', next: expect.stringContaining('ConfirmHostFenced') });
    expect(items(x.eventSet)).toHaveLength(3);
    const c = await ok({ Action: 'ConfirmHostFenced', Host: N1 });
    expect(c.host).toMatchObject({ state: 'FENCED', fencedBy: 'operator' });
    const ev = await ok({ Action: 'DescribeHAEvents', Host: N1, Level: 'critical' });
    expect(items(ev.eventSet).length).toBeGreaterThan(0);
    expect(items(ev.eventSet).every((e) => e.level === 'critical' && e.host === N1)).toBe(true);
  });

  it('SuspendHA and ResumeHA; the suspension shows on the host', async () => {
    await configureN1();
    const s = await ok({ Action: 'SuspendHA', Partition: 'cluster01', DurationMinutes: '30', Reason: 'rack work' });
    expect(s).toMatchObject({ scope: 'partition:cluster01', until: '2013-06-01T12:30:00.000Z', reason: 'rack work' });
    const d = await ok({ Action: 'DescribeHostHA', 'Host.1': N1 });
    expect(items(d.hostSet)[0].suspension).toMatchObject({ scope: 'partition:cluster01', reason: 'rack work' });
    expect(await ok({ Action: 'ResumeHA', Partition: 'cluster01' })).toMatchObject({ wasSuspended: 'true' });
    expect(await ok({ Action: 'ResumeHA', Partition: 'cluster01' })).toMatchObject({ wasSuspended: 'false' });
    const u = await ok({ Action: 'SuspendHA', Host: N1, Until: '2013-06-02T00:00:00Z' });
    expect(u).toMatchObject({ scope: `host:${N1}`, until: '2013-06-02T00:00:00.000Z' });
  });

  it('DescribeHAEvents: Since and MaxResults', async () => {
    await watched();
    const all = items((await ok({ Action: 'DescribeHAEvents' })).eventSet);
    expect(all.length).toBeGreaterThan(2);
    const last = items((await ok({ Action: 'DescribeHAEvents', MaxResults: '2' })).eventSet);
    expect(last).toEqual(all.slice(-2));
    expect(items((await ok({ Action: 'DescribeHAEvents', Since: '2013-06-01T12:00:01Z' })).eventSet)).toEqual([]);
    expect(items((await ok({ Action: 'DescribeHAEvents', Host: 'partition:cluster01' })).eventSet)[0].message).toMatch(/HA enabled for partition cluster01/);
  });

  it('with the not-wired provider every host is INELIGIBLE, saying so', async () => {
    h = await harness();
    await ok({ Action: 'ConfigureHAForHost', Host: N1 });
    // Enabling evaluates eligibility at once.
    const on = await ok({ Action: 'EnableHAForCluster', Partition: 'cluster01' });
    expect(items(on.hostSet)[0]).toMatchObject({ state: 'INELIGIBLE', reason: HA_NOT_WIRED_REASON });
    const d = await ok({ Action: 'DescribeHostHA', DryRun: 'true' });
    expect(items(d.hostSet)[0]).toMatchObject({ state: 'INELIGIBLE', reason: HA_NOT_WIRED_REASON });
    expect(items(d.hostSet)[0].dryRun.next).toContain(HA_NOT_WIRED_REASON);
    // FenceHost still runs; without a BMC to use the fence fails and waits for an operator.
    await ok({ Action: 'FenceHost', Host: N1 });
    await haOf(h).runner.idle();
    const f = items((await ok({ Action: 'DescribeHostHA', 'Host.1': N1 })).hostSet)[0];
    expect(f).toMatchObject({ state: 'FENCING', needsOperator: 'true' });
    const warned = items((await ok({ Action: 'DescribeHAEvents', Host: N1, Level: 'warn' })).eventSet);
    expect(warned.some((e) => /DisableService of 127\.0\.12\.11 failed: .*HA provider not configured/.test(e.message))).toBe(true);
    expect((await ok({ Action: 'ConfirmHostFenced', Host: N1 })).host).toMatchObject({ state: 'FENCED', fencedBy: 'operator' });
  });
});

describe('host HA actions: bad input changes nothing', () => {
  beforeEach(async () => {
    await configureN1();
  });

  it.each([
    ['an unknown parameter', { Action: 'EnableHAForHost', Host: N1, Force: 'true' }, 'UnknownParameter', /Force/],
    ['a missing host', { Action: 'FenceHost' }, 'MissingParameter', /Host/],
    ['a WaitSeconds above 20', { Action: 'DescribeHAEvents', WaitSeconds: '21' }, 'InvalidParameterValue', /WaitSeconds/],
    ['an After that is not a number', { Action: 'DescribeHAEvents', After: 'x' }, 'InvalidParameterValue', /After/],
    ['FenceHost with a Force that is not a boolean', { Action: 'FenceHost', Host: N1, Force: 'yes' }, 'InvalidParameterValue', /Force/],
    ['an unhealthyRange upside down', { Action: 'ConfigureHAForCluster', Partition: 'cluster01', UnhealthyRange: '[5-2]' }, 'InvalidParameterValue', /UnhealthyRange/],
    ['an unhealthyRange that is not a range', { Action: 'ConfigureHAForCluster', UnhealthyRange: '2-5' }, 'InvalidParameterValue', /UnhealthyRange/],
    ['a host that is not an address', { Action: 'ConfigureHAForHost', Host: 'node-1' }, 'InvalidParameterValue', /IPv4/],
    ['a node no CC reports', { Action: 'ConfigureHAForHost', Host: '127.0.12.99' }, 'InvalidHost.NotFound', /127\.0\.12\.99/],
    ['a host HA does not know', { Action: 'DisableHAForHost', Host: N2 }, 'InvalidHost.NotFound', /ConfigureHAForHost/],
    ['a malformed partition name', { Action: 'EnableHAForCluster', Partition: 'bad/name' }, 'InvalidParameterValue', /partition name/],
    ['an unknown partition', { Action: 'EnableHAForCluster', Partition: 'cluster09' }, 'InvalidAvailabilityZone', /cluster09/],
    ['a port that is not a number', { Action: 'ConfigureHAForHost', Host: N1, Port: '62x0' }, 'InvalidParameterValue', /whole number/],
    ['a port out of range', { Action: 'ConfigureHAForHost', Host: N1, Port: '70000' }, 'InvalidParameterValue', /at most 65535/],
    ['a timeout below the bound', { Action: 'ConfigureHAForHost', Host: N1, TimeoutMs: '10' }, 'InvalidParameterValue', /at least 1000/],
    ['an agent that is not fence_*', { Action: 'ConfigureHAForHost', Host: N1, Agent: 'ipmitool' }, 'InvalidParameterValue', /fence agent/],
    ['a password with a newline', { Action: 'ConfigureHAForHost', Host: N1, Password: 'a\nb' }, 'InvalidParameterValue', /one line/],
    ['an SslInsecure that is not a boolean', { Action: 'ConfigureHAForHost', Host: N1, SslInsecure: '0' }, 'InvalidParameterValue', /SslInsecure.*true or false/],
    ['a SystemsUri that is not an absolute path', { Action: 'ConfigureHAForHost', Host: N1, SystemsUri: 'Systems/1' }, 'InvalidParameterValue', /SystemsUri.*path/],
    ['a RedfishUri with a .. segment', { Action: 'ConfigureHAForHost', Host: N1, RedfishUri: '/redfish/../v1' }, 'InvalidParameterValue', /RedfishUri.*path/],
    ['Redfish options for a new BMC without an agent', { Action: 'ConfigureHAForHost', Host: N2, SslInsecure: 'true' }, 'MissingParameter', /Agent/],
    ['BMC settings without an address for a new BMC', { Action: 'ConfigureHAForHost', Host: N2, Agent: 'fence_ipmilan' }, 'MissingParameter', /Address/],
    ['the node in another partition than given', { Action: 'ConfigureHAForHost', Host: N1, Partition: 'cluster02' }, 'InvalidParameterCombination', /cluster01, not cluster02/],
    ['a ratio out of range', { Action: 'ConfigureHAForCluster', Partition: 'cluster01', ActivityCheckFailureRatio: '1.5' }, 'InvalidParameterValue', /ActivityCheckFailureRatio/],
    ['a setting that is not a number', { Action: 'ConfigureHAForCluster', Partition: 'cluster01', FenceTimeoutMs: '1e5' }, 'InvalidParameterValue', /FenceTimeoutMs/],
    ['settings that contradict each other', { Action: 'ConfigureHAForCluster', Partition: 'cluster01', ActivityCheckInitialDelayMs: '90000' }, 'InvalidParameterCombination', /activityCheckInitialDelayMs/],
    ['nothing to configure', { Action: 'ConfigureHAForCluster', Partition: 'cluster01' }, 'MissingParameter', /MaxUnhealthy/],
    ['a bad maxUnhealthy', { Action: 'ConfigureHAForCluster', MaxUnhealthy: '150%' }, 'InvalidParameterValue', /MaxUnhealthy/],
    ['an unknown auto-repair level', { Action: 'ConfigureHAForCluster', Partition: 'cluster01', AutoRepair: 'reboot' }, 'InvalidParameterValue', /AutoRepair/],
    ['AutoRepair without a partition', { Action: 'ConfigureHAForCluster', AutoRepair: 'off' }, 'InvalidParameterCombination', /Partition/],
    ['ConfirmHostFenced of a host not being fenced', { Action: 'ConfirmHostFenced', Host: N1 }, 'IncorrectHostHAState', /is DISABLED/],
    ['two scopes', { Action: 'SuspendHA', Host: N1, Partition: 'cluster01' }, 'InvalidParameterCombination', /exactly one/],
    ['no scope', { Action: 'ResumeHA' }, 'MissingParameter', /Host, Cluster or Partition/],
    ['Until and DurationMinutes together', { Action: 'SuspendHA', Partition: 'cluster01', Until: '2013-06-02T00:00:00Z', DurationMinutes: '5' }, 'InvalidParameterCombination', /not both/],
    ['a time that is not ISO 8601', { Action: 'SuspendHA', Partition: 'cluster01', Until: 'tomorrow' }, 'InvalidParameterValue', /ISO 8601/],
    ['a time in the past', { Action: 'SuspendHA', Partition: 'cluster01', Until: '2013-06-01T11:00:00Z' }, 'InvalidParameterValue', /future/],
    ['a bad boolean', { Action: 'DescribeHostHA', DryRun: 'maybe' }, 'InvalidParameterValue', /true or false/],
    ['a bad level', { Action: 'DescribeHAEvents', Level: 'error' }, 'InvalidParameterValue', /Level/],
    ['a bad count', { Action: 'DescribeHAEvents', MaxResults: '0' }, 'InvalidParameterValue', /at least 1/],
    ['a describe of an unknown host', { Action: 'DescribeHostHA', 'Host.1': N2 }, 'InvalidHost.NotFound', /127\.0\.12\.12/],
    ['an instance auto-repair without an instance', { Action: 'ConfigureHAForInstance', AutoRepair: 'off' }, 'MissingParameter', /InstanceId/],
    ['an instance auto-repair without a level', { Action: 'ConfigureHAForInstance', InstanceId: 'i-0000abcd' }, 'MissingParameter', /AutoRepair/],
    ['a malformed instance id', { Action: 'ConfigureHAForInstance', InstanceId: 'i-xyz', AutoRepair: 'off' }, 'InvalidInstanceID.Malformed', /i-xyz/],
    ['an unknown instance auto-repair level', { Action: 'ConfigureHAForInstance', InstanceId: 'i-0000abcd', AutoRepair: 'none' }, 'InvalidParameterValue', /off, migrate, failover, inherit/],
    ['an instance the CLC does not know', { Action: 'ConfigureHAForInstance', InstanceId: 'i-0000abcd', AutoRepair: 'off' }, 'InvalidInstanceID.NotFound', /i-0000abcd/],
    ['an unknown parameter of ConfigureHAForInstance', { Action: 'ConfigureHAForInstance', InstanceId: 'i-0000abcd', AutoRepair: 'off', Partition: 'cluster01' }, 'UnknownParameter', /Partition/],
  ] as [string, Record<string, string>, string, RegExp][])('%s', async (_name, params, code, message) => {
    const status = ClcErrors.table[code as keyof typeof ClcErrors.table].status;
    await refused(params, code, status, message);
  });

  it('a CLC built without HA answers ServiceUnavailable', async () => {
    h = await harness({ ha: false });
    const r = await query(h.app, { Action: 'DescribeHostHA' });
    expect(errorCode(r)).toBe('ServiceUnavailable');
    expect(r.status).toBe(503);
  });
});
