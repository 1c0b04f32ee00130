/**
 * What integration tests ask a TestCloud, as an operator and as the hypervisors themselves: admin
 * API calls that must succeed, node placement, and where each VM is according to the simhv daemons
 * (the ground truth). Shared by the migration and chaos tests.
 */
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import type { TestCloud } from './cloud.js';

/** xml2js (explicitArray false) gives one item as an object, several as an array, none as ''. */
export const arr = <T>(x: T | T[] | undefined | ''): T[] => (x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x]);

/** One admin call that must succeed; its `<Action>Response` element. */
export async function adminCall(cloud: TestCloud, params: Record<string, string>): Promise<any> {
  const r = await cloud.query(params);
  if (r.status !== 200) throw new Error(`${params.Action} → ${r.status}: ${r.text}`);
  return r.doc[`${params.Action}Response`];
}

export async function describeNodes(cloud: TestCloud): Promise<any[]> {
  return arr((await adminCall(cloud, { Action: 'DescribeNodes' })).nodeSet?.item);
}

export async function setNodeState(cloud: TestCloud, host: string, enabled: boolean): Promise<void> {
  await adminCall(cloud, { Action: enabled ? 'EnableService' : 'DisableService', Type: 'NODE', Host: host });
}

/** Puts `count` m1.small instances on `host` by disabling the other nodes while they start (and enabling them after). */
export async function placeOn(cloud: TestCloud, host: string, count: number): Promise<string[]> {
  const others = cloud.nodeHosts.filter((h) => h !== host);
  for (const h of others) await setNodeState(cloud, h, false);
  const r = await adminCall(cloud, { Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: String(count), MaxCount: String(count) });
  for (const h of others) await setNodeState(cloud, h, true);
  return arr<any>(r.instancesSet.item).map((i) => i.instanceId as string);
}

export interface HvDomain {
  readonly id: string;
  readonly state: string;
  readonly resources: { readonly cores: number; readonly memoryMiB: number; readonly diskGiB: number };
}

/** One host's domains, as its simhv daemon lists them (over its control socket, as the test's owner). */
export async function hypervisorDomains(cloud: TestCloud, host: string): Promise<HvDomain[]> {
  const driver = new SimDriver({ socketPath: cloud.simSocket(host) });
  try {
    return await driver.list();
  } finally {
    await driver.close();
  }
}

/** Where each instance runs according to the hypervisors, running copies only. */
export async function runningCopies(cloud: TestCloud): Promise<Map<string, string[]>> {
  const where = new Map<string, string[]>();
  for (const host of cloud.nodeHosts) {
    for (const d of await hypervisorDomains(cloud, host)) if (d.state === 'running') where.set(d.id, [...(where.get(d.id) ?? []), host]);
  }
  return where;
}

/** One migration as DescribeMigrations shows it. */
export async function describeMigration(cloud: TestCloud, migrationId: string): Promise<any> {
  return arr<any>((await adminCall(cloud, { Action: 'DescribeMigrations', 'MigrationId.1': migrationId })).migrationSet?.item)[0];
}

/** Reads until `ok` holds (poll, not sleep-then-expect); fails naming `what` and the last value past the deadline. */
export async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
