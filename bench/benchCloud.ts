/**
 * What the benches that run a whole cloud (bench/migrationSimCase.ts, bench/migrationLibvirtCase.ts)
 * do to it from outside: signed admin requests to its CLC, polling for a condition, and one guest
 * placed on the first of two hosts. Bench tooling: its errors go to the developer's terminal.
 */
import { join } from 'node:path';
import xml2js from 'xml2js';
import { readCredentialsFile, type Credentials } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';

export type Doc = Record<string, unknown>;
export type AdminQuery = (params: Record<string, string>) => Promise<Doc>;

/** `<set><item/>...</set>` as xml2js leaves it. */
export const items = (v: unknown): Doc[] => (v === undefined || v === '' ? [] : Array.isArray(v) ? v as Doc[] : [v as Doc]);

/** The admin credentials file the CLC of a cloud in `baseDir` writes at its first start. */
export const adminCredentialsFile = (baseDir: string): string => join(baseDir, 'clc', 'admin.credentials');

/** Signed AWS-Query requests to the CLC at `url`; an answer other than 200 throws, naming `label`. */
export function adminQuery(label: string, baseDir: string, url: string): AdminQuery {
  let creds: Credentials | undefined;
  return async (params) => {
    creds ??= await readCredentialsFile(adminCredentialsFile(baseDir));
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
    // A read reset on a kept-alive socket (the server closed it as the request went out) is sent once more on a new one.
    const send = () => fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    const res = await send().catch((e: unknown) => {
      const reset = (e as { cause?: { code?: string } }).cause?.code === 'ECONNRESET';
      if (reset && /^Describe/.test(params.Action ?? '')) return send();
      throw e;
    });
    const doc = await xml2js.parseStringPromise(await res.text(), { explicitArray: false }) as Doc;
    const body = Object.values(doc)[0] as Doc;
    if (res.status !== 200) throw new Error(`${label} bench: ${params.Action} answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  };
}

/** Until `look` answers, polled every `everyMs`, within `limitMs` (generous: the machine is shared). */
export async function until<T>(label: string, what: string, look: () => Promise<T | undefined>, everyMs: number, limitMs = 180_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${label} bench: ${what} within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** DescribeInstances of one instance. */
export async function describeInstance(q: AdminQuery, id: string): Promise<Doc | undefined> {
  const r = items(((await q({ Action: 'DescribeInstances', 'InstanceId.1': id })).reservationSet as Doc | undefined)?.item);
  return items((r[0]?.instancesSet as Doc | undefined)?.item)[0];
}

/**
 * One instance of `type` running on `hosts[0]` (`hosts[1]` disabled while it starts, enabled again
 * and seen so by the CC before this returns). Answers its id.
 */
export async function placeOnFirst(label: string, q: AdminQuery, hosts: readonly [string, string, ...string[]], type: string): Promise<string> {
  const nodesOf = async (): Promise<Doc[]> => items(((await q({ Action: 'DescribeNodes' })).nodeSet as Doc | undefined)?.item);
  const partition = await until(label, 'both nodes listed', async () => {
    const nodes = await nodesOf();
    return nodes.length >= 2 ? String(nodes[0]!.partition) : undefined;
  }, 250);
  await q({ Action: 'DisableService', Type: 'node', Host: hosts[1], Partition: partition });
  const run = await q({ Action: 'RunInstances', ImageId: 'emi-00000001', InstanceType: type, MinCount: '1', MaxCount: '1' });
  const instanceId = String(items((run.instancesSet as Doc).item)[0]!.instanceId);
  await until(label, `the guest running on ${hosts[0]}`, async () => {
    const i = await describeInstance(q, instanceId);
    return (i?.instanceState as Doc | undefined)?.name === 'running' && i?.nodeHost === hosts[0] ? true : undefined;
  }, 100);
  await q({ Action: 'EnableService', Type: 'node', Host: hosts[1], Partition: partition });
  await until(label, `${hosts[1]} enabled in the CC's view`, async () => (
    (await nodesOf()).some((x) => x.host === hosts[1] && x.nodeState === 'enabled') ? true : undefined), 250);
  return instanceId;
}
