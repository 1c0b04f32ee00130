/** User tags' rules (clc/core/userTags.ts), table-driven and by property, and their merge with the system tags. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instanceTags } from '../../clc/core/instanceTags.js';
import type { InstanceView } from '../../clc/core/instanceView.js';
import { selectResourceTags } from '../../clc/core/resourceTags.js';
import { judgeRunToken, type RunRequest, type RunTokenRecord } from '../../clc/core/runTokens.js';
import {
  classifyResourceId, MAX_USER_TAGS, planRetag, repeatedKey, sortTags, tagKeyProblem, tagValueProblem, unicodeLength, withoutTags, withTags,
  type Tag, type TaggableRecord, type TagSelector,
} from '../../clc/core/userTags.js';

const t = (key: string, value = ''): Tag => ({ key, value });
const show = (tags: readonly Tag[]): string[] => tags.map((x) => `${x.key}=${x.value}`);

describe('tagKeyProblem and tagValueProblem', () => {
  const keys: [string, string, string | undefined][] = [
    ['a plain key', 'Name', undefined],
    ['128 characters', 'k'.repeat(128), undefined],
    ['129 characters', 'k'.repeat(129), 'too-long'],
    ['128 characters outside the BMP (256 UTF-16 units)', '😀'.repeat(128), undefined],
    ['129 characters outside the BMP', '😀'.repeat(129), 'too-long'],
    ['empty', '', 'empty-key'],
    ['aws: (EC2\'s reserved prefix)', 'aws:cloudformation:stack-name', 'reserved'],
    ['AWS: in another case', 'AWS:x', 'reserved'],
    ['euca: (Eucalyptus\'s system tags)', 'euca:node', 'reserved'],
    ['Euca: in another case', 'Euca:node', 'reserved'],
    ['a key merely containing aws:', 'my-aws:key', undefined],
    ['aws without the colon', 'awsome', undefined],
    ['spaces, = and unicode', 'Cost centre = Zürich', undefined],
    ['a control character', 'a\u0001b', 'not-xml'],
    ['a non-character', 'a\uFFFEb', 'not-xml'],
    ['tab and newline (XML carries them)', 'a\tb\nc', undefined],
  ];
  it.each(keys)('key: %s', (_n, key, problem) => {
    expect(tagKeyProblem(key)?.kind).toBe(problem);
  });

  const values: [string, string, string | undefined][] = [
    ['empty', '', undefined],
    ['256 characters', 'v'.repeat(256), undefined],
    ['257 characters', 'v'.repeat(257), 'too-long'],
    ['aws: is only reserved in keys', 'aws:fine', undefined],
    ['a lone surrogate', 'a\uD800', 'not-xml'],
  ];
  it.each(values)('value: %s', (_n, value, problem) => {
    expect(tagValueProblem(value)?.kind).toBe(problem);
  });

  it('counts Unicode characters, not UTF-16 units', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => {
      expect(unicodeLength(s)).toBe(Array.from(s).length);
      expect(unicodeLength(s)).toBeLessThanOrEqual(s.length);
    }));
  });
});

describe('classifyResourceId', () => {
  const rows: [string, string, object][] = [
    ['an instance id', 'i-0a1b2c3d', { kind: 'instance', instanceId: 'i-0a1b2c3d' }],
    ['an instance id in upper case (Eucalyptus 3)', 'I-0A1B2C3D', { kind: 'instance', instanceId: 'i-0a1b2c3d' }],
    ['i- and too few digits', 'i-123', { kind: 'malformed-instance' }],
    ['i- and EC2\'s 17 digits (not Ferry\'s)', 'i-0123456789abcdef0', { kind: 'malformed-instance' }],
    ['a volume', 'vol-12345678', { kind: 'volume', volumeId: 'vol-12345678' }],
    ['a long volume id, upper-case', 'VOL-0123456789ABCDEF0', { kind: 'volume', volumeId: 'vol-0123456789abcdef0' }],
    ['a snapshot', 'snap-12345678', { kind: 'other-resource', prefix: 'snap' }],
    ['an EC2 image', 'ami-0123456789abcdef0', { kind: 'other-resource', prefix: 'ami' }],
    ['a Eucalyptus image', 'emi-0a1b2c3d', { kind: 'other-resource', prefix: 'emi' }],
    ['a security group', 'sg-0a1b2c3d', { kind: 'other-resource', prefix: 'sg' }],
    ['a malformed volume id', 'vol-xyz', { kind: 'invalid' }],
    ['a timestamp (a script reading the wrong column)', '2014-10-21T13:34:24.000Z', { kind: 'invalid' }],
    ['two ids in one (a shell quoting slip)', 'i-1234abcd i-9876dcba', { kind: 'malformed-instance' }],
    ['empty', '', { kind: 'invalid' }],
  ];
  it.each(rows)('%s', (_n, id, kind) => {
    expect(classifyResourceId(id)).toEqual(kind);
  });
});

describe('withTags and withoutTags', () => {
  const existing = [t('Name', 'web'), t('Owner', 'alice'), t('empty', '')];
  const creates: [string, Tag[], string[]][] = [
    ['adds a key, in key order', [t('Env', 'prod')], ['Env=prod', 'Name=web', 'Owner=alice', 'empty=']],
    ['overwrites a key\'s value', [t('Owner', 'bob')], ['Name=web', 'Owner=bob', 'empty=']],
    ['sets an empty value', [t('Name')], ['Name=', 'Owner=alice', 'empty=']],
  ];
  it.each(creates)('create: %s', (_n, added, expected) => {
    expect(show(withTags(existing, added))).toEqual(expected);
  });

  const deletes: [string, TagSelector[] | undefined, string[]][] = [
    ['a key without a value: whatever its value', [{ key: 'Owner' }], ['Name=web', 'empty=']],
    ['key and matching value', [{ key: 'Owner', value: 'alice' }], ['Name=web', 'empty=']],
    ['key and another value: kept', [{ key: 'Owner', value: 'bob' }], ['Name=web', 'Owner=alice', 'empty=']],
    ['an empty value deletes only an empty-valued tag', [{ key: 'Name', value: '' }, { key: 'empty', value: '' }], ['Name=web', 'Owner=alice']],
    ['a key the resource does not have: nothing', [{ key: 'Nope' }], ['Name=web', 'Owner=alice', 'empty=']],
    ['no Tag.N at all: every user tag', undefined, []],
  ];
  it.each(deletes)('delete: %s', (_n, selectors, expected) => {
    expect(show(withoutTags(existing, selectors))).toEqual(expected);
  });

  const tagArb = fc.record({ key: fc.string({ minLength: 1, maxLength: 6 }), value: fc.string({ maxLength: 4 }) });

  it('create then delete by key restores the tags of other keys; keys stay unique and sorted', () => {
    fc.assert(fc.property(fc.array(tagArb, { maxLength: 8 }), fc.array(tagArb, { maxLength: 8 }), (base, added) => {
      const before = withTags([], base);
      const after = withTags(before, added);
      const keys = after.map((x) => x.key);
      expect(keys).toEqual([...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      for (const a of added) expect(after.filter((x) => x.key === a.key)).toEqual([added.filter((x) => x.key === a.key).at(-1)]);
      const addedKeys = new Set(added.map((a) => a.key));
      expect(withoutTags(after, [...addedKeys].map((key) => ({ key })))).toEqual(before.filter((x) => !addedKeys.has(x.key)));
    }));
  });

  it('delete never adds, and deleting by key=value removes only exact matches', () => {
    fc.assert(fc.property(fc.array(tagArb, { maxLength: 8 }), fc.array(fc.record({ key: fc.string({ maxLength: 6 }), value: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }) }), { maxLength: 4 }), (base, sel) => {
      const before = withTags([], base);
      const selectors = sel.map((s) => (s.value === undefined ? { key: s.key } : { key: s.key, value: s.value }));
      const after = withoutTags(before, selectors);
      for (const x of after) expect(before).toContainEqual(x);
      for (const x of before) {
        const hit = selectors.some((s) => s.key === x.key && (s.value === undefined || s.value === x.value));
        expect(after.includes(x)).toBe(!hit);
      }
    }));
  });

  it('repeatedKey finds the first key given twice', () => {
    expect(repeatedKey(['a', 'b', 'a', 'b'])).toBe('a');
    expect(repeatedKey(['a', 'b'])).toBeUndefined();
  });
});

describe('planRetag', () => {
  const admin = { accountId: '000000000000', isAdmin: true };
  const alice = { accountId: '111111111111', isAdmin: false };
  const records: Record<string, TaggableRecord> = {
    'i-0000000a': { ownerId: '000000000000', userTags: [t('Name', 'a')] },
    'i-0000000b': { ownerId: '111111111111' },
    'i-0000000c': { ownerId: '111111111111', userTags: Array.from({ length: MAX_USER_TAGS }, (_, k) => t(`k${String(k).padStart(2, '0')}`)) },
  };
  const add = (tags: Tag[]) => (old: readonly Tag[] | undefined) => withTags(old, tags);

  const rows: [string, string[], typeof admin, Tag[], object][] = [
    ['the admin tags anyone\'s', ['i-0000000a', 'i-0000000b'], admin, [t('Env', 'x')], { kind: 'ok' }],
    ['a user tags their own', ['i-0000000b'], alice, [t('Env', 'x')], { kind: 'ok' }],
    ['a user does not see another account\'s', ['i-0000000b', 'i-0000000a'], alice, [t('Env', 'x')], { kind: 'not-found', ids: ['i-0000000a'] }],
    ['unknown ids are all named', ['i-000000ff', 'i-0000000a', 'i-000000ee'], admin, [t('Env')], { kind: 'not-found', ids: ['i-000000ff', 'i-000000ee'] }],
    ['not found comes before the limit', ['i-0000000c', 'i-000000ff'], admin, [t('new')], { kind: 'not-found', ids: ['i-000000ff'] }],
    ['a 51st tag is over the limit', ['i-0000000b', 'i-0000000c'], admin, [t('new')], { kind: 'over-limit', ids: ['i-0000000c'] }],
    ['overwriting at the limit is not', ['i-0000000c'], admin, [t('k00', 'v')], { kind: 'ok' }],
  ];
  it.each(rows)('%s', (_n, ids, who, tags, expected) => {
    const plan = planRetag(records, ids, who, add(tags));
    expect(plan).toMatchObject(expected);
    if (plan.kind === 'ok') expect([...plan.next.keys()]).toEqual(ids);
  });

  it('an id named like an Object.prototype member is just unknown', () => {
    expect(planRetag(records, ['constructor', '__proto__'], admin, add([t('a')]))).toEqual({ kind: 'not-found', ids: ['constructor', '__proto__'] });
  });
});

describe('tags in the views', () => {
  const base: InstanceView = {
    instanceId: 'i-0000000a', reservationId: 'r-0000000a', ownerId: '000000000000', imageId: 'emi-0000000a',
    instanceType: 'm1.small', state: 'running', partition: 'cluster01', host: '127.0.12.11',
    launchTime: 0, launchIndex: 0, migration: { state: 'none' }, reported: true,
  };

  it('merges user and system tags in key order (upper case before euca:, lower case after)', () => {
    const v = { ...base, userTags: sortTags([t('zone', 'z'), t('Name', 'web')]) };
    expect(show(instanceTags(v))).toEqual(['Name=web', 'euca:node=127.0.12.11', 'zone=z']);
  });

  it('a terminated instance keeps its user tags and loses its system tags', () => {
    expect(show(instanceTags({ ...base, state: 'terminated', host: undefined, reported: false, userTags: [t('Name', 'web')] }))).toEqual(['Name=web']);
  });

  it('a user tag can never shadow a system tag', () => {
    expect(show(instanceTags({ ...base, userTags: [t('euca:node', 'forged')] }))).toEqual(['euca:node=127.0.12.11']);
  });

  it('DescribeTags\' tag:<key> sees user and system tags of the same resource', () => {
    const a = { ...base, userTags: [t('Owner', 'alice')] };
    const b = { ...base, instanceId: 'i-0000000b', host: '127.0.12.12', userTags: [t('Owner', 'bob')] };
    expect(selectResourceTags([a, b], [{ name: 'tag:Owner', values: ['alice'] }]).map((x) => `${x.resourceId} ${x.key}=${x.value}`))
      .toEqual(['i-0000000a Owner=alice', 'i-0000000a euca:node=127.0.12.11']);
  });
});

describe('a ClientToken binds the TagSpecification tags', () => {
  const REQ: RunRequest = { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 1, maxCount: 1 };
  const record = (request: RunRequest): RunTokenRecord => ({
    token: 'tok', ownerId: '000000000000', request, reservationId: 'r-00000001', partition: 'cluster01', instanceIds: ['i-00000002'], createdAt: 0,
  });
  const rows: [string, RunRequest, RunRequest, string, string[]?][] = [
    ['the same tags repeat', { ...REQ, tags: [t('Owner', 'a')] }, { ...REQ, tags: [t('Owner', 'a')] }, 'repeat'],
    ['a token recorded before tags, repeated without tags', REQ, REQ, 'repeat'],
    ['an empty list is no tags', REQ, { ...REQ, tags: [] }, 'repeat'],
    ['another value', { ...REQ, tags: [t('Owner', 'a')] }, { ...REQ, tags: [t('Owner', 'b')] }, 'mismatch', ['TagSpecification "Owner"="a" then "Owner"="b"']],
    ['tags added', REQ, { ...REQ, tags: [t('Owner', 'a')] }, 'mismatch', ['TagSpecification (none) then "Owner"="a"']],
    ['no two lists read alike', { ...REQ, tags: [t('a', 'b" "c"="d')] }, { ...REQ, tags: [t('a', 'b'), t('c', 'd')] }, 'mismatch'],
  ];
  it.each(rows)('%s', (_n, first, again, kind, differences) => {
    const v = judgeRunToken(record(first), again, 1);
    expect(v.kind).toBe(kind);
    if (differences && v.kind === 'mismatch') expect(v.differences).toEqual(differences);
  });
});
