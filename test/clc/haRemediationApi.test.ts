/**
 * External remediation's admin API (issue 15) through the whole HTTP pipeline (fake Clusters,
 * memory stores, the scripted FakeHa): ConfigureHAForCluster's Remediation* parameters (the secret
 * kept in the BMC store, never answered or in clc.json) and CompleteHostRemediation; every bad input
 * is a coded refusal that changes neither store.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_ONLY } from '../../clc/api/authorization.js';
import { TEST_USER, signedQuery, testAuthenticator } from './authFixtures.js';
import { FakeHa } from './ha/fakeHa.js';
import { errorCode, harness, query, START, type Harness } from './harness.js';

const N1 = '127.0.12.11';
const SECRET = 'remediation-s3cret';
const WEBHOOK = 'http://127.0.71.1:18230/remediate';

let h: Harness;

beforeEach(async () => {
  const fake = new FakeHa();
  h = await harness({ ha: { provider: fake, actions: fake } });
});

const ha = () => {
  if (!h.ha) throw new Error('harness without HA');
  return h.ha;
};
const snapshot = () => JSON.stringify([h.store.read(), ha().bmc.read()]);

async function ok(params: Record<string, string>): Promise<string> {
  const r = await query(h.app, params);
  expect(r.text).not.toContain(SECRET);
  if (r.status !== 200) throw new Error(`${params.Action}: ${r.status} ${r.text}`);
  return r.text;
}

describe('ConfigureHAForCluster: remediation', () => {
  it('a webhook with a secret: listed as external, the secret only as secretSet and only in the BMC store', async () => {
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', RemediationWebhook: WEBHOOK, RemediationSecret: SECRET, ExternalRemediationTimeoutMs: '120000' });
    const list = await ok({ Action: 'ListHostHAConfigurations' });
    expect(list).toContain(`<remediation><strategy>external</strategy><webhook>${WEBHOOK}</webhook><secretSet>true</secretSet></remediation>`);
    expect(list).toContain('<name>externalRemediationTimeoutMs</name><value>120000</value>');
    expect(h.store.read().ha.partitions.cluster01?.remediation).toEqual({ strategy: 'external', webhook: { url: WEBHOOK } });
    expect(JSON.stringify(h.store.read())).not.toContain(SECRET);
    expect(ha().bmc.read().remediationSecrets).toEqual({ cluster01: SECRET });
  });

  it('a command replaces the webhook; fence drops both; an empty secret removes it', async () => {
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', RemediationWebhook: WEBHOOK, RemediationSecret: SECRET });
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', RemediationCommand: '/usr/local/bin/remediate', 'RemediationArg.1': '--site', 'RemediationArg.2': 'a' });
    expect(h.store.read().ha.partitions.cluster01?.remediation).toEqual({ strategy: 'external', command: { path: '/usr/local/bin/remediate', args: ['--site', 'a'] } });
    await ok({ Action: 'ConfigureHAForCluster', Partition: 'cluster01', Remediation: 'fence', RemediationSecret: '' });
    expect(h.store.read().ha.partitions.cluster01?.remediation).toEqual({ strategy: 'fence' });
    expect(ha().bmc.read().remediationSecrets).toEqual({});
  });

  it.each([
    ['without Partition', { Remediation: 'external', RemediationWebhook: WEBHOOK }, 'InvalidParameterCombination', /set per cluster: give Partition/],
    ['external with neither a command nor a webhook', { Partition: 'cluster01', Remediation: 'external' }, 'InvalidParameterCombination', /exactly one of a command or a webhook/],
    ['a relative command path', { Partition: 'cluster01', RemediationCommand: 'bin/remediate' }, 'InvalidParameterCombination', /must be an absolute path/],
    ['a webhook that is not http(s)', { Partition: 'cluster01', RemediationWebhook: 'ftp://127.0.71.1/x' }, 'InvalidParameterCombination', /http:\/\/ or https:\/\//],
    ['a webhook with a password in it', { Partition: 'cluster01', RemediationWebhook: 'http://u:pw@127.0.71.1/x' }, 'InvalidParameterCombination', /without a user or password/],
    ['a command with Remediation=fence', { Partition: 'cluster01', Remediation: 'fence', RemediationCommand: '/bin/true' }, 'InvalidParameterCombination', /only used with Remediation=external/],
    ['a command and a webhook', { Partition: 'cluster01', RemediationCommand: '/bin/true', RemediationWebhook: WEBHOOK }, 'InvalidParameterCombination', /not both/],
    ['arguments without a command', { Partition: 'cluster01', 'RemediationArg.1': 'x' }, 'InvalidParameterCombination', /only with RemediationCommand/],
    ['an unknown strategy', { Partition: 'cluster01', Remediation: 'reboot' }, 'InvalidParameterValue', /Remediation/],
    ['a secret on two lines', { Partition: 'cluster01', RemediationSecret: 'a\nb' }, 'InvalidParameterValue', /one line/],
  ])('refused: %s', async (_name, params, code, message) => {
    const before = snapshot();
    const r = await query(h.app, { Action: 'ConfigureHAForCluster', ...params });
    expect(errorCode(r), r.text).toBe(code);
    expect(r.doc.Response.Errors.Error.Message).toMatch(message);
    expect(snapshot()).toBe(before);
  });
});

describe('CompleteHostRemediation', () => {
  it('is admin-only', async () => {
    expect(ADMIN_ONLY.has('CompleteHostRemediation')).toBe(true);
    const hu = await harness({ authenticator: testAuthenticator });
    const r = await signedQuery(hu.app, { Action: 'CompleteHostRemediation', Host: N1, RemediationId: '1-a', Result: 'succeeded' }, TEST_USER, START);
    expect(errorCode(r)).toBe('UnauthorizedOperation');
  });

  it.each([
    ['an unknown host', { Host: '127.0.12.99', RemediationId: '1-a', Result: 'succeeded' }, 'InvalidHost.NotFound', 400],
    ['a host with no remediation in flight', { Host: N1, RemediationId: '1-a', Result: 'succeeded' }, 'IncorrectHostHAState', 409],
    ['no Result', { Host: N1, RemediationId: '1-a' }, 'MissingParameter', 400],
    ['an unknown Result', { Host: N1, RemediationId: '1-a', Result: 'maybe' }, 'InvalidParameterValue', 400],
    ['a malformed id', { Host: N1, RemediationId: 'a b', Result: 'failed' }, 'InvalidParameterValue', 400],
  ])('refused: %s', async (_name, params, code, status) => {
    await ok({ Action: 'ConfigureHAForHost', Host: N1 });
    const before = snapshot();
    const r = await query(h.app, { Action: 'CompleteHostRemediation', ...params });
    expect(errorCode(r), r.text).toBe(code);
    expect(r.status).toBe(status);
    await ha().runner.idle();
    expect(snapshot()).toBe(before);
  });
});
