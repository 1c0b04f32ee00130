/**
 * The reproduced requestbuilder pieces against the examples their own source documents
 * (flatten_params' and parse_listdelimited_aws_xml's docstrings), Python 2's urlencode, and the
 * signature of AWS's published SigV4 example, so the integration suite's requests and readings
 * rest on checked ground.
 */
import { describe, expect, it } from 'vitest';
import { binaryTagDef, ternaryTagDef } from './eucaCommands.js';
import { get, list, parseListDelimitedXml, XmlParseError } from './listDelimitedXml.js';
import { EMPTY, flattenParams, hmacV4Signature, pythonUrlencode, type ParamInput } from './requestbuilder.js';

describe('flatten_params', () => {
  it.each([
    ['a plain dict (request.py docstring)', { InstanceId: 'i-12345678', PublicIp: '1.2.3.4' }, { InstanceId: 'i-12345678', PublicIp: '1.2.3.4' }],
    ['a list', { RegionName: ['us-east-1', 'us-west-1'] }, { 'RegionName.1': 'us-east-1', 'RegionName.2': 'us-west-1' }],
    ['filters and a list (request.py docstring)', {
      Filter: [{ Name: 'image-id', Value: ['ami-12345678'] }, { Name: 'instance-type', Value: ['m1.small', 't1.micro'] }], InstanceId: ['i-24680135'],
    }, {
      'Filter.1.Name': 'image-id', 'Filter.1.Value.1': 'ami-12345678', 'Filter.2.Name': 'instance-type',
      'Filter.2.Value.1': 'm1.small', 'Filter.2.Value.2': 't1.micro', 'InstanceId.1': 'i-24680135',
    }],
    ['booleans as true/false, even false', { ListAll: false, ShowEvents: true }, { ListAll: 'false', ShowEvents: 'true' }],
    ['None, empty strings and empty lists left out, 0 kept', { A: undefined, B: null, C: '', D: [], E: 0 }, { E: '0' }],
    ['a dotted key as it is', { 'Placement.AvailabilityZone': 'cluster01' }, { 'Placement.AvailabilityZone': 'cluster01' }],
    ['EMPTY sent as an empty value, where \'\' is left out (__init__.py:44-47)', { Tag: [{ Key: 'a', Value: EMPTY }, { Key: 'b', Value: '' }] } as ParamInput,
      { 'Tag.1.Key': 'a', 'Tag.1.Value': '', 'Tag.2.Key': 'b' }],
  ])('%s', (_name, input, expected) => {
    expect(Object.fromEntries(flattenParams(input))).toEqual(expected);
  });
});

describe('euca2ools\' --tag arguments (argtypes.py docstrings), flattened', () => {
  it.each([
    ['create KEY=VALUE', binaryTagDef('k=v'), { 'Tag.1.Key': 'k', 'Tag.1.Value': 'v' }],
    ['create KEY=', binaryTagDef('k='), { 'Tag.1.Key': 'k', 'Tag.1.Value': '' }],
    ['create KEY', binaryTagDef('k'), { 'Tag.1.Key': 'k', 'Tag.1.Value': '' }],
    ['create KEY=a=b (split at the first =)', binaryTagDef('k=a=b'), { 'Tag.1.Key': 'k', 'Tag.1.Value': 'a=b' }],
    ['delete KEY=VALUE', ternaryTagDef('k=v'), { 'Tag.1.Key': 'k', 'Tag.1.Value': 'v' }],
    ['delete KEY=', ternaryTagDef('k='), { 'Tag.1.Key': 'k', 'Tag.1.Value': '' }],
    ['delete KEY', ternaryTagDef('k'), { 'Tag.1.Key': 'k' }],
  ])('%s', (_name, tag, expected) => {
    expect(Object.fromEntries(flattenParams({ Tag: [tag] } as ParamInput))).toEqual(expected);
  });

  it('create refuses an empty tag and one without a key, as argparse would', () => {
    expect(() => binaryTagDef('')).toThrow(/non-empty/);
    expect(() => binaryTagDef('=v')).toThrow(/must include a key/);
  });
});

describe('Python 2 urlencode (quote_plus)', () => {
  it.each([
    [[['Action', 'DescribeInstances']], 'Action=DescribeInstances'],
    [[['Filter.1.Name', 'tag:euca:node']], 'Filter.1.Name=tag%3Aeuca%3Anode'],
    [[['a', 'b c~d/e']], 'a=b+c%7Ed%2Fe'],
    [[['x', 'é']], 'x=%C3%A9'],
  ] as [[string, string][], string][])('%j', (pairs, expected) => {
    expect(pythonUrlencode(pairs)).toBe(expected);
  });
});

describe('HmacV4Auth signature', () => {
  it('gives the signature of AWS\'s published SigV4 example (IAM ListUsers, 2015-08-30)', () => {
    const v4 = hmacV4Signature({
      method: 'GET',
      url: new URL('https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08'),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8', Host: 'iam.amazonaws.com', 'X-Amz-Date': '20150830T123600Z', 'User-Agent': 'not signed' },
      payloadHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      amzDate: '20150830T123600Z', region: 'us-east-1', service: 'iam', secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    });
    expect(v4).toEqual({
      signedHeaders: 'content-type;host;x-amz-date',
      scope: '20150830/us-east-1/iam/aws4_request',
      signature: '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    });
  });
});

describe('parse_listdelimited_aws_xml', () => {
  it('reads the docstring examples', async () => {
    expect(await parseListDelimitedXml('<a><b>spam</b><c>eggs</c></a>')).toEqual({ a: { b: 'spam', c: 'eggs' } });
    expect(await parseListDelimitedXml('<a><b><c>spam</c></b><b><c>eggs</c></b></a>', ['a'])).toEqual({ a: [{ c: 'spam' }, { c: 'eggs' }] });
  });

  it('strips namespaces, makes empty elements {} and empty lists [], and lets the last duplicate win outside lists', async () => {
    const doc = await parseListDelimitedXml(
      '<?xml version="1.0"?><R xmlns="http://ec2.amazonaws.com/doc/2013-02-01/"><x/><tagSet/><groupSet><item><groupId>g</groupId></item></groupSet><d><item>1</item><item>2</item></d></R>',
      ['tagSet', 'groupSet'],
    );
    expect(doc).toEqual({ R: { x: {}, tagSet: [], groupSet: [{ groupId: 'g' }], d: { item: '2' } } });
    expect(list(get(doc.R, 'groupSet'))).toHaveLength(1);
  });

  it('refuses what is not XML, as ElementTree does', async () => {
    await expect(parseListDelimitedXml('<!DOCTYPE html><html><body><pre>Cannot POST</pre></body>')).rejects.toBeInstanceOf(XmlParseError);
  });
});
