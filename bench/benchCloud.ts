/**
 * What the benches that run a whole cloud (bench/migrationSimCase.ts, bench/migrationLibvirtCase.ts)
 * do to it from outside: signed admin requests to its CLC and polling for a condition
 * (scripts/adminQuery.ts), and one guest placed on the first of two hosts. Bench tooling: its errors
 * go to the developer's terminal.
 */
import { items, until, type AdminQuery, type Doc } from '../scripts/adminQuery.js';

export { adminCredentialsFile, adminQuery, items, until, type AdminQuery, type Doc } from '../scripts/adminQuery.js';

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
