/**
 * CreateTags and DeleteTags through the HTTP pipeline: user tags beside the system tags in every
 * view, EC2's delete semantics, who may tag what, durability, and every refusal changing nothing
 * (clc.json compared before and after, no CC asked).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLC_STORE_FILE, openClcStore } from '../../clc/state/clcStore.js';
import { signedQuery, testAuthenticator, TEST_ADMIN, TEST_USER } from './authFixtures.js';
import { errorCode, harness, items, launchRunning, query, START, type Harness, type QueryReply } from './harness.js';

const instancesOf = (r: QueryReply): any[] => items(r.doc.DescribeInstancesResponse.reservationSet).flatMap((rv) => items(rv.instancesSet));
const tagsOf = (i: any): string[] => items(i.tagSet).map((t) => `${t.key}=${t.value ?? ''}`);

/** `Tag.N.Key` / `Tag.N.Value` (a null value: the key alone) and `ResourceId.N`. */
function tagParams(action: string, ids: readonly string[], tags: readonly (readonly [string, string | null])[] = []): Record<string, string> {
  const p: Record<string, string> = { Action: action };
  ids.forEach((id, k) => { p[`ResourceId.${k + 1}`] = id; });
  tags.forEach(([key, value], k) => {
    p[`Tag.${k + 1}.Key`] = key;
    if (value !== null) p[`Tag.${k + 1}.Value`] = value;
  });
  return p;
}

async function ok(h: Harness, params: Record<string, string>): Promise<QueryReply> {
  const r = await query(h.app, params);
  expect(r.status, r.text).toBe(200);
  return r;
}

async function tagsById(h: Harness, params: Record<string, string> = {}): Promise<Map<string, string[]>> {
  return new Map(instancesOf(await ok(h, { Action: 'DescribeInstances', ...params })).map((i) => [i.instanceId as string, tagsOf(i)]));
}

async function describeTags(h: Harness, params: Record<string, string> = {}): Promise<string[]> {
  const r = await ok(h, { Action: 'DescribeTags', ...params });
  return items(r.doc.DescribeTagsResponse.tagSet).map((t) => `${t.resourceId} ${t.key}=${t.value ?? ''}`);
}

/** Two running instances in cluster01 (on .11) and one in cluster02 (on .21). */
async function cloud(): Promise<{ h: Harness; a: string; b: string; c: string }> {
  const h = await harness();
  const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2) as [string, string];
  const [c] = await launchRunning(h, 'cluster02') as [string];
  return { h, a, b, c };
}

describe('CreateTags', () => {
  it('answers return=true and shows the tags beside euca:node everywhere: tagSet, DescribeTags and the tag filters', async () => {
    const { h, a, b, c } = await cloud();
    const r = await ok(h, tagParams('CreateTags', [a, b], [['Owner', 'alice'], ['Name', 'web'], ['zone', '']]));
    expect(r.doc.CreateTagsResponse.return).toBe('true');
    const byId = await tagsById(h);
    expect(byId.get(a)).toEqual(['Name=web', 'Owner=alice', 'euca:node=127.0.12.11', 'zone=']);
    expect(byId.get(b)).toEqual(byId.get(a));
    expect(byId.get(c)).toEqual(['euca:node=127.0.12.21']);
    expect(await describeTags(h, { 'Filter.1.Name': 'resource-id', 'Filter.1.Value.1': a }))
      .toEqual([`${a} Name=web`, `${a} Owner=alice`, `${a} euca:node=127.0.12.11`, `${a} zone=`]);
    expect(await describeTags(h, { 'Filter.1.Name': 'key', 'Filter.1.Value.1': 'Owner' })).toEqual([`${a} Owner=alice`, `${b} Owner=alice`]);
    expect(await describeTags(h, { 'Filter.1.Name': 'tag:Name', 'Filter.1.Value.1': 'w*', 'Filter.2.Name': 'key', 'Filter.2.Value.1': 'euca:node' }))
      .toEqual([`${a} euca:node=127.0.12.11`, `${b} euca:node=127.0.12.11`]);
    const ids = async (name: string, value: string) => [...(await tagsById(h, { 'Filter.1.Name': name, 'Filter.1.Value.1': value })).keys()];
    expect(await ids('tag:Owner', 'alice')).toEqual([a, b]);
    expect(await ids('tag:Owner', 'bob')).toEqual([]);
    expect(await ids('tag-key', 'Owner')).toEqual([a, b]);
    expect(await ids('tag-value', 'web')).toEqual([a, b]);
    expect(await ids('tag:zone', '')).toEqual([a, b]);
  });

  it('overwrites a key\'s value, keeps the others, and accepts a key without a value (empty, as EC2)', async () => {
    const { h, a } = await cloud();
    await ok(h, tagParams('CreateTags', [a], [['Owner', 'alice'], ['Name', 'web']]));
    await ok(h, tagParams('CreateTags', [a], [['Owner', 'bob'], ['Flag', null]]));
    expect((await tagsById(h)).get(a)).toEqual(['Flag=', 'Name=web', 'Owner=bob', 'euca:node=127.0.12.11']);
  });

  it('stores the tags on the instance records only, asks no CC, and does not wait for a pending drain (no change gate)', async () => {
    const { h, a, b } = await cloud();
    const calls = h.clusters.calls.length;
    const drain = h.gate.enter('exclusive', 'a drain in progress', ['cluster01', 'cluster02']);
    await drain.ready();
    try {
      await ok(h, tagParams('CreateTags', [a, b], [['Owner', 'alice']]));
      await ok(h, tagParams('DeleteTags', [b], [['Owner', null]]));
    } finally {
      drain.leave();
    }
    expect(h.clusters.calls.length).toBe(calls);
    expect(h.store.read().instances[a]?.userTags).toEqual([{ key: 'Owner', value: 'alice' }]);
    expect(h.store.read().instances[b]).not.toHaveProperty('userTags');
  });

  it('takes ids in upper case and once each, as the other instance actions', async () => {
    const { h, a } = await cloud();
    await ok(h, tagParams('CreateTags', [a.toUpperCase(), a], [['Owner', 'alice']]));
    expect(h.store.read().instances[a]?.userTags).toEqual([{ key: 'Owner', value: 'alice' }]);
  });

  it('tags a terminated instance, which keeps its user tags (not its system tags) while it is listed', async () => {
    const { h, a } = await cloud();
    await ok(h, tagParams('CreateTags', [a], [['Owner', 'alice']]));
    await ok(h, { Action: 'TerminateInstances', 'InstanceId.1': a });
    h.clusters.dropInstance(a);
    await ok(h, tagParams('CreateTags', [a], [['Reason', 'retired']]));
    const [gone] = instancesOf(await ok(h, { Action: 'DescribeInstances', 'InstanceId.1': a }));
    expect(gone.instanceState.name).toBe('terminated');
    expect(tagsOf(gone)).toEqual(['Owner=alice', 'Reason=retired']);
    expect(await describeTags(h, { 'Filter.1.Name': 'resource-id', 'Filter.1.Value.1': a })).toEqual([`${a} Owner=alice`, `${a} Reason=retired`]);
  });

  it('is durable before the reply: a CLC over the same state dir shows the tags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-usertags-'));
    try {
      const first = await harness({ store: await openClcStore(dir) });
      const [a] = await launchRunning(first, 'cluster01') as [string];
      await ok(first, tagParams('CreateTags', [a], [['Owner', 'alice']]));
      const second = await harness({ clusters: first.clusters, store: await openClcStore(dir) });
      expect((await tagsById(second)).get(a)).toEqual(['Owner=alice', 'euca:node=127.0.12.11']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads a clc.json written before user tags (no userTags on records, no tags on tokens)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-usertags-old-'));
    try {
      const record = { instanceId: 'i-0000000a', reservationId: 'r-0000000a', ownerId: '000000000000', imageId: 'emi-00000001', vmType: 'm1.small', partition: 'cluster01', launchTime: START, launchIndex: 0, phase: 'launched', clientToken: 'tok' };
      const token = { token: 'tok', ownerId: '000000000000', request: { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 1, maxCount: 1 }, reservationId: 'r-0000000a', partition: 'cluster01', instanceIds: ['i-0000000a'], createdAt: START };
      writeFileSync(join(dir, CLC_STORE_FILE), JSON.stringify({
        schemaVersion: 1, kind: 'ferry-clc',
        data: { vmTypes: [{ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }], instances: { 'i-0000000a': record }, runTokens: { '000000000000/tok': token } },
      }));
      const h = await harness({ store: await openClcStore(dir) });
      expect(h.store.read().instances['i-0000000a']).not.toHaveProperty('userTags');
      // The old token still answers a repeat without tags, and a repeat with tags is another request.
      const run = { Action: 'RunInstances', ImageId: 'emi-00000001', MinCount: '1', MaxCount: '1', ClientToken: 'tok' };
      expect((await ok(h, run)).doc.RunInstancesResponse.reservationId).toBe('r-0000000a');
      const tagged = await query(h.app, { ...run, 'TagSpecification.1.ResourceType': 'instance', 'TagSpecification.1.Tag.1.Key': 'Owner' });
      expect(errorCode(tagged), tagged.text).toBe('IdempotentParameterMismatch');
      await ok(h, tagParams('CreateTags', ['i-0000000a'], [['Owner', 'alice']]));
      const raw = JSON.parse(readFileSync(join(dir, CLC_STORE_FILE), 'utf8'));
      expect(raw.data.instances['i-0000000a'].userTags).toEqual([{ key: 'Owner', value: 'alice' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('DeleteTags', () => {
  async function tagged(): Promise<{ h: Harness; a: string; b: string }> {
    const { h, a, b } = await cloud();
    await ok(h, tagParams('CreateTags', [a, b], [['Owner', 'alice'], ['Name', 'web'], ['Empty', '']]));
    return { h, a, b };
  }

  const rows: [string, [string, string | null][], string[]][] = [
    ['a key alone: whatever its value', [['Owner', null]], ['Empty=', 'Name=web', 'euca:node=127.0.12.11']],
    ['key=value that matches', [['Owner', 'alice']], ['Empty=', 'Name=web', 'euca:node=127.0.12.11']],
    ['key=value that does not match: kept', [['Owner', 'bob']], ['Empty=', 'Name=web', 'Owner=alice', 'euca:node=127.0.12.11']],
    ['key= (empty): only an empty-valued tag', [['Name', ''], ['Empty', '']], ['Name=web', 'Owner=alice', 'euca:node=127.0.12.11']],
    ['a key the instance does not have: nothing, and no error', [['Nope', null]], ['Empty=', 'Name=web', 'Owner=alice', 'euca:node=127.0.12.11']],
    ['no Tag at all: every user tag (never a system tag)', [], ['euca:node=127.0.12.11']],
  ];
  it.each(rows)('%s', async (_n, tags, expected) => {
    const { h, a, b } = await tagged();
    const r = await ok(h, tagParams('DeleteTags', [a], tags));
    expect(r.doc.DeleteTagsResponse.return).toBe('true');
    const byId = await tagsById(h);
    expect(byId.get(a)).toEqual(expected);
    expect(byId.get(b)).toEqual(['Empty=', 'Name=web', 'Owner=alice', 'euca:node=127.0.12.11']);
  });

  it('leaves no empty userTags behind', async () => {
    const { h, a } = await tagged();
    await ok(h, tagParams('DeleteTags', [a]));
    expect(h.store.read().instances[a]).not.toHaveProperty('userTags');
  });
});

describe('who may tag', () => {
  it('the admin tags anyone\'s instance; another identity only its own account\'s, the others being NotFound (as EC2 hides them)', async () => {
    const h = await harness({ authenticator: (clock) => testAuthenticator(clock) });
    const run = { Action: 'RunInstances', ImageId: 'emi-00000001', 'Placement.AvailabilityZone': 'cluster01' };
    const mine = (await signedQuery(h.app, run, TEST_USER, START)).doc.RunInstancesResponse.instancesSet.item.instanceId as string;
    const admins = (await signedQuery(h.app, run, TEST_ADMIN, START)).doc.RunInstancesResponse.instancesSet.item.instanceId as string;
    expect((await signedQuery(h.app, tagParams('CreateTags', [mine], [['Owner', 'alice']]), TEST_USER, START)).status).toBe(200);
    const before = JSON.stringify(h.store.read());
    for (const action of ['CreateTags', 'DeleteTags']) {
      const r = await signedQuery(h.app, tagParams(action, [mine, admins], [['Owner', 'mallory']]), TEST_USER, START);
      expect([r.status, errorCode(r)], r.text).toEqual([400, 'InvalidInstanceID.NotFound']);
      expect(r.doc.Response.Errors.Error.Message).toContain(admins);
      expect(r.doc.Response.Errors.Error.Message).not.toContain(mine);
    }
    expect(JSON.stringify(h.store.read())).toBe(before);
    expect((await signedQuery(h.app, tagParams('CreateTags', [mine, admins], [['Audited', 'yes']]), TEST_ADMIN, START)).status).toBe(200);
    expect(h.store.read().instances[mine]?.userTags).toEqual([{ key: 'Audited', value: 'yes' }, { key: 'Owner', value: 'alice' }]);
  });
});

describe('every refusal is coded and changes nothing', () => {
  const id = (k: number) => `i-0000000${k}`;
  type Row = [string, (ids: { a: string; b: string }) => Record<string, string>, string];
  const rows: Row[] = [
    ['no ResourceId', () => tagParams('CreateTags', [], [['Owner', 'x']]), 'MissingParameter'],
    ['a malformed instance id', ({ a }) => tagParams('CreateTags', [a, 'i-xyz'], [['Owner', 'x']]), 'InvalidInstanceID.Malformed'],
    ['an unknown volume beside a known instance', ({ a }) => tagParams('CreateTags', [a, 'vol-12345678'], [['Owner', 'x']]), 'InvalidVolume.NotFound'],
    ['an unknown volume, deleting', ({ a }) => tagParams('DeleteTags', [a, 'vol-0123456789abcdef0']), 'InvalidVolume.NotFound'],
    ['a snapshot id (Ferry tags instances and volumes only)', ({ a }) => tagParams('CreateTags', [a, 'snap-12345678'], [['Owner', 'x']]), 'InvalidID'],
    ['a malformed volume id', ({ a }) => tagParams('CreateTags', [a, 'vol-xyz'], [['Owner', 'x']]), 'InvalidID'],
    ['an image id', ({ a }) => tagParams('CreateTags', [a, 'emi-0a1b2c3d'], [['Owner', 'x']]), 'InvalidID'],
    ['a security group id', ({ a }) => tagParams('DeleteTags', [a, 'sg-0a1b2c3d']), 'InvalidID'],
    ['no id at all', ({ a }) => tagParams('CreateTags', [a, 'my-server'], [['Owner', 'x']]), 'InvalidID'],
    ['an unknown instance beside a known one', ({ a }) => tagParams('CreateTags', [a, id(9)], [['Owner', 'x']]), 'InvalidInstanceID.NotFound'],
    ['an unknown instance, deleting', ({ a }) => tagParams('DeleteTags', [a, id(9)]), 'InvalidInstanceID.NotFound'],
    ['no Tag to create', ({ a }) => tagParams('CreateTags', [a]), 'InvalidParameterValue'],
    ['an empty key', ({ a }) => tagParams('CreateTags', [a], [['Owner', 'x'], ['', 'y']]), 'InvalidParameterValue'],
    ['a value without its key', ({ a }) => ({ ...tagParams('CreateTags', [a]), 'Tag.1.Value': 'orphan' }), 'InvalidParameterValue'],
    ['a 129-character key', ({ a }) => tagParams('CreateTags', [a], [['k'.repeat(129), 'x']]), 'InvalidParameterValue'],
    ['a 257-character value', ({ a }) => tagParams('CreateTags', [a], [['Owner', 'v'.repeat(257)]]), 'InvalidParameterValue'],
    ['an aws: key', ({ a }) => tagParams('CreateTags', [a], [['aws:cloudformation:stack-name', 'x']]), 'InvalidParameterValue'],
    ['a euca: key (Eucalyptus\'s system tags)', ({ a }) => tagParams('CreateTags', [a], [['euca:node', '127.0.12.99']]), 'InvalidParameterValue'],
    ['deleting a euca: key', ({ a }) => tagParams('DeleteTags', [a], [['euca:node', null]]), 'InvalidParameterValue'],
    ['deleting an aws: key', ({ a }) => tagParams('DeleteTags', [a], [['aws:x', null]]), 'InvalidParameterValue'],
    ['a key given twice', ({ a }) => tagParams('CreateTags', [a], [['Owner', 'x'], ['Owner', 'y']]), 'InvalidParameterValue'],
    ['a control character in a value', ({ a }) => tagParams('CreateTags', [a], [['Owner', 'x\u0007']]), 'InvalidParameterValue'],
    ['51 tags in one request', ({ a }) => tagParams('CreateTags', [a], Array.from({ length: 51 }, (_, k) => [`k${k}`, ''] as const)), 'TagLimitExceeded'],
    ['a 51st tag on an instance that has 50 (the other one could take it)', ({ a, b }) => tagParams('CreateTags', [b, a], [['one-more', '']]), 'TagLimitExceeded'],
    ['a parameter CreateTags does not take', ({ a }) => ({ ...tagParams('CreateTags', [a], [['Owner', 'x']]), 'Tag.1.Colour': 'red' }), 'UnknownParameter'],
    ['DryRun=true (valid and allowed: nothing is done)', ({ a }) => ({ ...tagParams('CreateTags', [a], [['Owner', 'x']]), DryRun: 'true' }), 'DryRunOperation'],
    ['DryRun=true on DeleteTags', ({ a }) => ({ ...tagParams('DeleteTags', [a]), DryRun: 'true' }), 'DryRunOperation'],
  ];

  it.each(rows)('%s', async (_n, params, code) => {
    const { h, a, b } = await cloud();
    await ok(h, tagParams('CreateTags', [a], Array.from({ length: 50 }, (_, k) => [`k${String(k).padStart(2, '0')}`, 'v'] as const)));
    await ok(h, tagParams('CreateTags', [b], [['Keep', 'me']]));
    const before = { store: JSON.stringify(h.store.read()), calls: h.clusters.calls.length };
    const r = await query(h.app, params({ a, b }));
    expect(errorCode(r), r.text).toBe(code);
    expect(r.status).toBe(code === 'DryRunOperation' ? 412 : 400);
    expect({ store: JSON.stringify(h.store.read()), calls: h.clusters.calls.length }).toEqual(before);
  });

  it('names every unknown id, and says which id is not an instance', async () => {
    const { h, a } = await cloud();
    const notFound = await query(h.app, tagParams('CreateTags', [id(8), a, id(9)], [['Owner', 'x']]));
    expect(notFound.doc.Response.Errors.Error.Message).toBe("The instance IDs 'i-00000008, i-00000009' do not exist");
    const volume = await query(h.app, tagParams('CreateTags', ['vol-12345678'], [['Owner', 'x']]));
    expect(volume.doc.Response.Errors.Error.Message).toBe("The volume 'vol-12345678' does not exist.");
    const snapshot = await query(h.app, tagParams('CreateTags', ['snap-12345678'], [['Owner', 'x']]));
    expect(snapshot.doc.Response.Errors.Error.Message).toMatch(/^The ID 'snap-12345678' is not valid: Ferry tags instances .* and volumes .* only/);
    const reserved = await query(h.app, tagParams('CreateTags', [a], [['aws:x', 'y']]));
    expect(reserved.doc.Response.Errors.Error.Message).toMatch(/^Value \(aws:x\) for parameter Tag\.1\.Key is invalid\. Tag keys starting with 'aws:' are reserved/);
    const noTags = await query(h.app, tagParams('CreateTags', [a]));
    expect(noTags.doc.Response.Errors.Error.Message).toMatch(/^You must specify one or more tags to create/);
  });
});

describe('volume tags (issue 18)', () => {
  /** A volume record as CreateVolume leaves it (the tags need no backend). */
  async function addVolume(h: Harness, volumeId: string, ownerId: string, userTags?: { key: string; value: string }[]): Promise<void> {
    await h.store.update((d) => {
      d.volumes[volumeId] = {
        volumeId, ownerId, size: 1, partition: 'cluster01', volumeType: 'standard', createTime: START, state: 'available',
        path: `/srv/ferry/volumes/${volumeId}.img`, ...(userTags ? { userTags } : {}),
      };
    });
  }

  async function volumeTags(h: Harness, params: Record<string, string> = {}): Promise<Map<string, string[]>> {
    const r = await ok(h, { Action: 'DescribeVolumes', ...params });
    return new Map(items(r.doc.DescribeVolumesResponse.volumeSet).map((v) => [v.volumeId as string, tagsOf(v)]));
  }

  it('CreateTags tags volumes and instances in one request; tagSet, the tag filters and DescribeTags (resourceType volume) show them', async () => {
    const { h, a } = await cloud();
    await addVolume(h, 'vol-0000000a', TEST_ADMIN.accountId);
    await addVolume(h, 'vol-0000000b', TEST_ADMIN.accountId, [{ key: 'Keep', value: 'me' }]);
    await ok(h, tagParams('CreateTags', ['VOL-0000000A', a, 'vol-0000000b'], [['app', 'db'], ['Name', 'data']]));
    expect(await volumeTags(h)).toEqual(new Map([['vol-0000000a', ['Name=data', 'app=db']], ['vol-0000000b', ['Keep=me', 'Name=data', 'app=db']]]));
    expect(h.store.read().instances[a]?.userTags).toEqual([{ key: 'Name', value: 'data' }, { key: 'app', value: 'db' }]);
    expect([...(await volumeTags(h, { 'Filter.1.Name': 'tag:Keep', 'Filter.1.Value.1': 'me' })).keys()]).toEqual(['vol-0000000b']);
    expect([...(await volumeTags(h, { 'Filter.1.Name': 'tag-key', 'Filter.1.Value.1': 'app' })).keys()]).toEqual(['vol-0000000a', 'vol-0000000b']);
    const tags = await ok(h, { Action: 'DescribeTags', 'Filter.1.Name': 'resource-type', 'Filter.1.Value.1': 'volume' });
    expect(items(tags.doc.DescribeTagsResponse.tagSet).map((t) => `${t.resourceId} ${t.resourceType} ${t.key}=${t.value ?? ''}`)).toEqual([
      'vol-0000000a volume Name=data', 'vol-0000000a volume app=db',
      'vol-0000000b volume Keep=me', 'vol-0000000b volume Name=data', 'vol-0000000b volume app=db',
    ]);
    expect(await describeTags(h, { 'Filter.1.Name': 'tag:Keep', 'Filter.1.Value.1': 'me' }))
      .toEqual(['vol-0000000b Keep=me', 'vol-0000000b Name=data', 'vol-0000000b app=db']);
    expect(await describeTags(h, { 'Filter.1.Name': 'key', 'Filter.1.Value.1': 'app' })).toEqual([`${a} app=db`, 'vol-0000000a app=db', 'vol-0000000b app=db']);
  });

  it('DeleteTags removes a volume\'s tags (by key, by key=value, all); the record survives a reopen of clc.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-voltags-'));
    try {
      const store = await openClcStore(dir);
      const h = await harness({ store });
      await addVolume(h, 'vol-0000000a', TEST_ADMIN.accountId, [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { key: 'c', value: '3' }]);
      await ok(h, tagParams('DeleteTags', ['vol-0000000a'], [['a', null], ['b', 'not-2']]));
      expect((await volumeTags(h)).get('vol-0000000a')).toEqual(['b=2', 'c=3']);
      await ok(h, tagParams('DeleteTags', ['vol-0000000a'], [['b', '2']]));
      expect((await volumeTags(h)).get('vol-0000000a')).toEqual(['c=3']);
      const reopened = await openClcStore(dir);
      expect(reopened.read().volumes['vol-0000000a']?.userTags).toEqual([{ key: 'c', value: '3' }]);
      await ok(h, tagParams('DeleteTags', ['vol-0000000a']));
      expect(h.store.read().volumes['vol-0000000a']?.userTags).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('all or nothing across kinds: an unknown volume leaves the instance untagged, an unknown instance the volume; a volume over the limit the instance', async () => {
    const { h, a } = await cloud();
    await addVolume(h, 'vol-0000000a', TEST_ADMIN.accountId, Array.from({ length: 50 }, (_, k) => ({ key: `k${String(k).padStart(2, '0')}`, value: '' })));
    await addVolume(h, 'vol-0000000b', TEST_ADMIN.accountId);
    const before = JSON.stringify(h.store.read());
    const cases: [Record<string, string>, string, RegExp][] = [
      [tagParams('CreateTags', [a, 'vol-0000000b', 'vol-000000ff'], [['x', '']]), 'InvalidVolume.NotFound', /vol-000000ff/],
      [tagParams('CreateTags', ['vol-0000000b', 'i-000000ff'], [['x', '']]), 'InvalidInstanceID.NotFound', /i-000000ff/],
      [tagParams('CreateTags', [a, 'vol-0000000a'], [['one-more', '']]), 'TagLimitExceeded', /vol-0000000a/],
    ];
    for (const [params, code, names] of cases) {
      const r = await query(h.app, params);
      expect(errorCode(r), r.text).toBe(code);
      expect(r.doc.Response.Errors.Error.Message).toMatch(names);
      expect(JSON.stringify(h.store.read())).toBe(before);
    }
  });

  it('another account\'s volume is InvalidVolume.NotFound to a user, and the admin tags it', async () => {
    const h = await harness({ authenticator: testAuthenticator });
    await addVolume(h, 'vol-0000000a', 'someone-else');
    await addVolume(h, 'vol-0000000b', TEST_USER.accountId);
    const before = JSON.stringify(h.store.read());
    const r = await signedQuery(h.app, tagParams('CreateTags', ['vol-0000000b', 'vol-0000000a'], [['Owner', 'alice']]), TEST_USER, START);
    expect(r.doc.Response.Errors.Error.Code).toBe('InvalidVolume.NotFound');
    expect(r.doc.Response.Errors.Error.Message).toBe("The volume 'vol-0000000a' does not exist.");
    expect(JSON.stringify(h.store.read())).toBe(before);
    expect((await signedQuery(h.app, tagParams('CreateTags', ['vol-0000000b'], [['Owner', 'alice']]), TEST_USER, START)).status).toBe(200);
    expect((await signedQuery(h.app, tagParams('CreateTags', ['vol-0000000a'], [['Audited', 'yes']]), TEST_ADMIN, START)).status).toBe(200);
    expect(h.store.read().volumes['vol-0000000a']?.userTags).toEqual([{ key: 'Audited', value: 'yes' }]);
  });
});
