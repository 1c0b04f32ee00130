/**
 * RunInstances' TagSpecification (what boto3's create_instances(TagSpecifications=...) and
 * `aws ec2 run-instances --tag-specifications` send): the tags are written with the instance
 * records before the CC is asked, shown in the answer and every view, and bound to the ClientToken.
 */
import { describe, expect, it } from 'vitest';
import type { Clusters } from '../../clc/clusters/clusters.js';
import { errorCode, harness, items, query, type Harness, type QueryReply } from './harness.js';

const RUN = { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '2', MaxCount: '2', 'Placement.AvailabilityZone': 'cluster01' };

/** `TagSpecification.N.ResourceType` and `.Tag.M.Key` / `.Tag.M.Value` for each spec. */
function specs(...list: { type?: string; tags?: [string, string | null][] }[]): Record<string, string> {
  const p: Record<string, string> = {};
  list.forEach((s, n) => {
    const prefix = `TagSpecification.${n + 1}`;
    if (s.type !== undefined) p[`${prefix}.ResourceType`] = s.type;
    (s.tags ?? []).forEach(([key, value], m) => {
      p[`${prefix}.Tag.${m + 1}.Key`] = key;
      if (value !== null) p[`${prefix}.Tag.${m + 1}.Value`] = value;
    });
  });
  return p;
}

const OWNED = specs({ type: 'instance', tags: [['Project', 'ferry'], ['Owner', 'alice']] });
const tagsOf = (i: any): string[] => items(i.tagSet).map((t) => `${t.key}=${t.value ?? ''}`);
const launched = (r: QueryReply): any[] => items(r.doc.RunInstancesResponse.instancesSet);

describe('RunInstances with TagSpecification', () => {
  it('writes the tags with the records before asking the CC, and answers with them beside euca:node', async () => {
    let seen: unknown[] = [];
    const h: Harness = await harness({
      wrap: (fake) => ({
        partitions: fake.partitions,
        call: async (p, op, req) => {
          if (op === 'ccRunInstances') seen = Object.values(h.store.read().instances).map((r) => [r.phase, r.userTags]);
          return fake.call(p, op, req);
        },
      }) as Clusters,
    });
    const r = await query(h.app, { ...RUN, ...OWNED });
    expect(r.status, r.text).toBe(200);
    const tags = [{ key: 'Owner', value: 'alice' }, { key: 'Project', value: 'ferry' }];
    expect(seen).toEqual([['requested', tags], ['requested', tags]]);
    const answer = launched(r);
    expect(answer).toHaveLength(2);
    for (const i of answer) expect(tagsOf(i)).toEqual(['Owner=alice', 'Project=ferry', `euca:node=${i.nodeHost}`]);
  });

  it('the instances are found by tag:Owner, and DescribeTags lists their user and system tags', async () => {
    const h = await harness();
    const ids = launched(await query(h.app, { ...RUN, ...OWNED })).map((i) => i.instanceId as string);
    await query(h.app, { ...RUN, MinCount: '1', MaxCount: '1' });
    const found = await query(h.app, { Action: 'DescribeInstances', 'Filter.1.Name': 'tag:Owner', 'Filter.1.Value.1': 'alice' });
    expect(items(found.doc.DescribeInstancesResponse.reservationSet).flatMap((rv) => items(rv.instancesSet)).map((i) => i.instanceId)).toEqual(ids);
    const tags = await query(h.app, { Action: 'DescribeTags', 'Filter.1.Name': 'tag:Project', 'Filter.1.Value.1': 'ferry' });
    expect(items(tags.doc.DescribeTagsResponse.tagSet).map((t) => `${t.resourceId} ${t.key}`))
      .toEqual(ids.flatMap((id) => [`${id} Owner`, `${id} Project`, `${id} euca:node`]));
  });

  it('a key without a value is the empty value', async () => {
    const h = await harness();
    const r = await query(h.app, { ...RUN, MinCount: '1', MaxCount: '1', ...specs({ type: 'instance', tags: [['Flag', null]] }) });
    expect(tagsOf(launched(r)[0])).toContain('Flag=');
  });

  describe('a ClientToken binds the tags', () => {
    const TOKEN = { ...RUN, ClientToken: 'tok-tags' };

    it('the same tags (in any order) repeat the reservation and launch nothing', async () => {
      const h = await harness();
      const first = await query(h.app, { ...TOKEN, ...OWNED });
      const again = await query(h.app, { ...TOKEN, ...specs({ type: 'instance', tags: [['Owner', 'alice'], ['Project', 'ferry']] }) });
      expect(again.doc.RunInstancesResponse.reservationId).toBe(first.doc.RunInstancesResponse.reservationId);
      expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toHaveLength(1);
      expect(h.store.read().runTokens['000000000000/tok-tags']?.request.tags).toEqual([{ key: 'Owner', value: 'alice' }, { key: 'Project', value: 'ferry' }]);
    });

    it('the repeat shows the tags as they are now (changed by CreateTags since)', async () => {
      const h = await harness();
      const [a] = launched(await query(h.app, { ...TOKEN, ...OWNED })).map((i) => i.instanceId as string);
      await query(h.app, { Action: 'CreateTags', 'ResourceId.1': a as string, 'Tag.1.Key': 'Owner', 'Tag.1.Value': 'bob' });
      const again = launched(await query(h.app, { ...TOKEN, ...OWNED }));
      expect(tagsOf(again.find((i) => i.instanceId === a))).toContain('Owner=bob');
    });

    it.each([
      ['other tags', specs({ type: 'instance', tags: [['Owner', 'bob'], ['Project', 'ferry']] }), 'TagSpecification "Owner"="alice" "Project"="ferry" then "Owner"="bob" "Project"="ferry"'],
      ['no tags', {}, 'TagSpecification "Owner"="alice" "Project"="ferry" then (none)'],
    ])('%s: IdempotentParameterMismatch, and nothing changes', async (_n, change, detail) => {
      const h = await harness();
      await query(h.app, { ...TOKEN, ...OWNED });
      const before = { store: JSON.stringify(h.store.read()), calls: h.clusters.mutatingCalls().length };
      const r = await query(h.app, { ...TOKEN, ...change });
      expect([r.status, errorCode(r)], r.text).toEqual([400, 'IdempotentParameterMismatch']);
      expect(r.doc.Response.Errors.Error.Message).toContain(detail);
      expect({ store: JSON.stringify(h.store.read()), calls: h.clusters.mutatingCalls().length }).toEqual(before);
    });
  });

  it.each([
    ['a volume (EC2 tags a launch\'s volumes; Ferry launches none)', specs({ type: 'volume', tags: [['Owner', 'a']] }), 'InvalidParameterValue', /'volume' is not a valid taggable resource type/],
    ['a type RunInstances cannot tag', specs({ type: 'network-interface', tags: [['Owner', 'a']] }), 'InvalidParameterValue', /'network-interface' is not a valid taggable resource type/],
    ['no resource type', specs({ tags: [['Owner', 'a']] }), 'InvalidParameterValue', /resource type must have a value/],
    ['no tag', specs({ type: 'instance' }), 'InvalidParameterValue', /at least one tag/],
    ['instance twice', specs({ type: 'instance', tags: [['a', '1']] }, { type: 'instance', tags: [['b', '2']] }), 'InvalidParameterValue', /more than once/],
    ['an aws: key', specs({ type: 'instance', tags: [['aws:autoscaling:groupName', 'g']] }), 'InvalidParameterValue', /reserved/],
    ['a euca: key', specs({ type: 'instance', tags: [['euca:node', '127.0.12.99']] }), 'InvalidParameterValue', /reserved/],
    ['a key given twice', specs({ type: 'instance', tags: [['keep', '1'], ['keep', '2']] }), 'InvalidParameterValue', /Duplicate tag key 'keep'/],
    ['a 257-character value', specs({ type: 'instance', tags: [['Owner', 'v'.repeat(257)]] }), 'InvalidParameterValue', /256 characters/],
    ['51 tags', specs({ type: 'instance', tags: Array.from({ length: 51 }, (_, k) => [`k${k}`, 'v'] as [string, string]) }), 'TagLimitExceeded', /51 tags given/],
    ['an unknown member', { 'TagSpecification.1.ResourceType': 'instance', 'TagSpecification.1.Tags.1.Key': 'Owner' }, 'UnknownParameter', /TagSpecification\.1\.Tags/],
  ])('%s: a coded error, nothing written, no CC asked', async (_n, change, code, message) => {
    const h = await harness();
    const before = JSON.stringify(h.store.read());
    const r = await query(h.app, { ...RUN, ClientToken: 'tok-bad', ...change });
    expect([r.status, errorCode(r)], r.text).toEqual([400, code]);
    expect(r.doc.Response.Errors.Error.Message).toMatch(message);
    expect(JSON.stringify(h.store.read())).toBe(before);
    expect(h.clusters.calls).toEqual([]);
  });
});
