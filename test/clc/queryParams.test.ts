import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { awsParamName, parseQueryParams, PARAM_LIMITS, valueAt } from '../../clc/api/queryParams.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { FerryError } from '../../shared/errors/registry.js';

const parse = (q: string) => parseQueryParams(new URLSearchParams(q));
/** Plain JSON view of the tree (maps have no prototype). */
const plain = (q: string) => JSON.parse(JSON.stringify(parse(q))) as unknown;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof FerryError ? e.code : `uncoded: ${String(e)}`;
  }
}

describe('parseQueryParams: accepted shapes', () => {
  const table: [string, string, unknown][] = [
    ['plain value', 'Action=DescribeInstances', { Action: 'DescribeInstances' }],
    ['empty value', 'ImageId=', { ImageId: '' }],
    ['numbered list', 'InstanceId.1=i-1&InstanceId.2=i-2', { InstanceId: ['i-1', 'i-2'] }],
    ['list in any order', 'InstanceId.2=b&InstanceId.1=a', { InstanceId: ['a', 'b'] }],
    ['nested member', 'Placement.AvailabilityZone=cluster01', { Placement: { AvailabilityZone: 'cluster01' } }],
    ['filters', 'Filter.1.Name=instance-type&Filter.1.Value.1=m1.small&Filter.1.Value.2=c1.medium&Filter.2.Name=node&Filter.2.Value.1=x',
      { Filter: [{ Name: 'instance-type', Value: ['m1.small', 'c1.medium'] }, { Name: 'node', Value: ['x'] }] }],
    ['index 10 after 9', Array.from({ length: 10 }, (_, i) => `Z.${i + 1}=${i + 1}`).join('&'), { Z: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'] }],
    ['prototype names are plain names', 'constructor=1&toString=2&hasOwnProperty.1=3', { constructor: '1', toString: '2', hasOwnProperty: ['3'] }],
    ['SigV4 names', 'X-Amz-Date=20130601T000000Z', { 'X-Amz-Date': '20130601T000000Z' }],
    ['percent-decoded', 'Filter.1.Name=tag%3Aname&Filter.1.Value.1=a%20b', { Filter: [{ Name: 'tag:name', Value: ['a b'] }] }],
  ];
  it.each(table)('%s', (_name, q, expected) => {
    expect(plain(q)).toEqual(expected);
  });

  it('freezes the tree and gives maps no prototype', () => {
    const t = parse('A.B=1&L.1=x');
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.L)).toBe(true);
    expect(Object.getPrototypeOf(t)).toBeNull();
    expect(Object.getPrototypeOf(t.A)).toBeNull();
  });
});

describe('parseQueryParams: refused shapes are MalformedQueryString', () => {
  const table: [string, string][] = [
    ['duplicate key', 'Action=A&Action=B'],
    ['value and parent', 'Filter.1=x&Filter.1.Name=y'],
    ['parent then value', 'Filter.1.Name=y&Filter.1=x'],
    ['gap in a list', 'InstanceId.1=a&InstanceId.3=c'],
    ['list not starting at 1', 'InstanceId.2=b'],
    ['index 0', 'InstanceId.0=a'],
    ['leading zero', 'InstanceId.01=a'],
    ['mixed index and name', 'P.1=a&P.Name=b'],
    ['empty segment', 'A..B=1'],
    ['trailing dot', 'A.=1'],
    ['empty name', '=x'],
    ['bad characters', 'A$B=1'],
    ['underscore first', '__proto__=1'],
    ['index too large', `L.${PARAM_LIMITS.maxIndex + 1}=x`],
    ['too deep', 'A.B.C.D.E.F.G=1'],
    ['name too long', `${'A'.repeat(PARAM_LIMITS.maxKeyLength + 1)}=1`],
  ];
  it.each(table)('%s', (_name, q) => {
    expect(codeOf(() => parse(q))).toBe('MalformedQueryString');
  });

  it('refuses more than maxPairs parameters', () => {
    const pairs = Array.from({ length: PARAM_LIMITS.maxPairs + 1 }, (_, i) => [`K${i}`, 'v'] as const);
    expect(codeOf(() => parseQueryParams(pairs))).toBe('MalformedQueryString');
  });

  it('echoes no control characters in its message', () => {
    try {
      parse('A%00%1b[31m=1');
      expect.unreachable();
    } catch (e) {
      expect((e as Error).message).not.toMatch(/[\x00-\x1f]/);
    }
  });
});

describe('awsParamName and valueAt', () => {
  it.each([
    [['Filter', 0, 'Value', 1], 'Filter.1.Value.2'],
    [['InstanceId', 2], 'InstanceId.3'],
    [['Placement', 'AvailabilityZone'], 'Placement.AvailabilityZone'],
  ] as const)('%j → %s', (path, name) => {
    expect(awsParamName(path)).toBe(name);
  });

  it('finds values and misses safely', () => {
    const t = parse('Filter.1.Name=a&Filter.1.Value.1=b');
    expect(valueAt(t, ['Filter', 0, 'Value', 0])).toBe('b');
    expect(valueAt(t, ['Filter', 1])).toBeUndefined();
    expect(valueAt(t, ['Filter', 0, 'Name', 'x'])).toBeUndefined();
    expect(valueAt(t, ['constructor'])).toBeUndefined();
  });
});

describe('parseQueryParams: properties', () => {
  const segment = fc.oneof(
    fc.constantFrom('Action', 'InstanceId', 'Filter', 'Name', 'Value', 'Placement', 'constructor', '__proto__', 'X-Amz-Date'),
    fc.integer({ min: 0, max: 12 }).map(String),
    fc.string({ maxLength: 6 }),
  );
  const key = fc.array(segment, { minLength: 1, maxLength: 8 }).map((s) => s.join('.'));
  const pairs = fc.array(fc.tuple(fc.oneof(key, fc.string({ maxLength: 20 })), fc.string({ maxLength: 10 })), { maxLength: 30 });

  it('any input gives a tree or MalformedQueryString, never another failure', () => {
    fc.assert(fc.property(pairs, (ps) => {
      const code = codeOf(() => parseQueryParams(ps));
      expect([undefined, 'MalformedQueryString']).toContain(code);
    }), { numRuns: 2000 });
  });

  it('any raw query string gives a tree or MalformedQueryString', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (q) => {
      expect([undefined, 'MalformedQueryString']).toContain(codeOf(() => parse(q)));
    }), { numRuns: 2000 });
  });

  it('every well-formed flat list round-trips in order', () => {
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,8}$/);
    fc.assert(fc.property(name, fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 40 }), (n, values) => {
      const shuffled = values.map((v, i) => [`${n}.${i + 1}`, v] as const).reverse();
      expect(parseQueryParams(shuffled)[n]).toEqual(values);
    }));
  });

  it('the coded error is the registry\'s own', () => {
    expect(ClcErrors.has('MalformedQueryString')).toBe(true);
    expect(ClcErrors.table.MalformedQueryString.status).toBe(400);
  });
});
