/** Each action's parameter validation, table-driven, without a server: query string → input or code. */
import { describe, expect, it } from 'vitest';
import { parseDescribeAvailabilityZones } from '../../clc/api/actions/describeAvailabilityZones.js';
import { parseDescribeInstances } from '../../clc/api/actions/describeInstances.js';
import { parseDescribeNodes } from '../../clc/api/actions/describeNodes.js';
import { parseDescribeServices } from '../../clc/api/actions/describeServices.js';
import { parseDescribeTags } from '../../clc/api/actions/describeTags.js';
import { parseCreateTags, parseDeleteTags } from '../../clc/api/actions/instanceTagging.js';
import { parseModifyService } from '../../clc/api/actions/modifyService.js';
import { parseModifyServiceByName } from '../../clc/api/actions/modifyServiceByName.js';
import { MAX_INSTANCES_PER_REQUEST, parseRunInstances } from '../../clc/api/actions/runInstances.js';
import { parseTerminateInstances } from '../../clc/api/actions/terminateInstances.js';
import { splitEnvelope } from '../../clc/api/envelope.js';
import { parseQueryParams, type ParamMap } from '../../clc/api/queryParams.js';
import { FerryError } from '../../shared/errors/registry.js';

type Outcome = { ok: unknown } | { code: string; message?: RegExp };
type Row = [string, string, Outcome];

function check(parse: (p: ParamMap) => unknown, q: string, outcome: Outcome): void {
  const params = parseQueryParams(new URLSearchParams(q));
  if ('ok' in outcome) {
    expect(parse(params)).toEqual(outcome.ok);
    return;
  }
  try {
    parse(params);
    expect.unreachable(`expected ${outcome.code}`);
  } catch (e) {
    expect(e).toBeInstanceOf(FerryError);
    expect((e as FerryError).code).toBe(outcome.code);
    if (outcome.message) expect((e as FerryError).message).toMatch(outcome.message);
  }
}

describe('RunInstances', () => {
  const rows: Row[] = [
    ['defaults', 'ImageId=emi-0a1b2c3d', { ok: { imageId: 'emi-0a1b2c3d', instanceType: 'm1.small', minCount: 1, maxCount: 1, zone: undefined, tags: [] } }],
    ['Eucalyptus upper-case image id', 'ImageId=emi-0A1B2C3D', { ok: { imageId: 'emi-0A1B2C3D', instanceType: 'm1.small', minCount: 1, maxCount: 1, zone: undefined, tags: [] } }],
    ['all given', 'ImageId=emi-00000001&InstanceType=c1.medium&MinCount=2&MaxCount=5&Placement.AvailabilityZone=cluster02',
      { ok: { imageId: 'emi-00000001', instanceType: 'c1.medium', minCount: 2, maxCount: 5, zone: 'cluster02', tags: [] } }],
    ['MaxCount defaults to MinCount', 'ImageId=emi-00000001&MinCount=3', { ok: { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 3, maxCount: 3, zone: undefined, tags: [] } }],
    ['MinCount defaults to 1', 'ImageId=emi-00000001&MaxCount=4', { ok: { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 1, maxCount: 4, zone: undefined, tags: [] } }],
    ['missing ImageId', 'MinCount=1', { code: 'MissingParameter', message: /ImageId/ }],
    ['malformed ImageId', 'ImageId=ami-12', { code: 'InvalidAMIID.Malformed', message: /ami-12/ }],
    ['ImageId given as a list', 'ImageId.1=emi-00000001', { code: 'InvalidParameterValue', message: /ImageId/ }],
    ['MinCount not a number', 'ImageId=emi-00000001&MinCount=two', { code: 'InvalidParameterValue', message: /MinCount/ }],
    ['MinCount negative', 'ImageId=emi-00000001&MinCount=-1', { code: 'InvalidParameterValue', message: /MinCount/ }],
    ['MinCount zero', 'ImageId=emi-00000001&MinCount=0', { code: 'InvalidParameterValue', message: /MinCount/ }],
    ['MaxCount above the bound', `ImageId=emi-00000001&MaxCount=${MAX_INSTANCES_PER_REQUEST + 1}`, { code: 'InvalidParameterValue', message: /MaxCount/ }],
    ['MinCount > MaxCount', 'ImageId=emi-00000001&MinCount=3&MaxCount=2', { code: 'InvalidParameterCombination', message: /MinCount/ }],
    ['empty zone', 'ImageId=emi-00000001&Placement.AvailabilityZone=', { code: 'InvalidParameterValue', message: /Placement.AvailabilityZone/ }],
    ['unknown Placement member', 'ImageId=emi-00000001&Placement.Tenancy=dedicated', { code: 'UnknownParameter', message: /Placement.Tenancy/ }],
    ['unknown parameter', 'ImageId=emi-00000001&KeyName=k', { code: 'UnknownParameter', message: /KeyName/ }],
    ['TagSpecification: the instances\' tags in key order', 'ImageId=emi-00000001&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=b&TagSpecification.1.Tag.1.Value=2&TagSpecification.1.Tag.2.Key=a',
      { ok: { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 1, maxCount: 1, zone: undefined, tags: [{ key: 'a', value: '' }, { key: 'b', value: '2' }] } }],
    ['TagSpecification of a volume', 'ImageId=emi-00000001&TagSpecification.1.ResourceType=volume&TagSpecification.1.Tag.1.Key=a',
      { code: 'InvalidParameterValue', message: /TagSpecification\.1\.ResourceType.*'volume' is not a valid taggable resource type/ }],
    ['TagSpecification with an empty key', 'ImageId=emi-00000001&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=',
      { code: 'InvalidParameterValue', message: /TagSpecification\.1\.Tag\.1\.Key/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseRunInstances, q, o));
});

describe('DescribeInstances', () => {
  const none = { instanceIds: [], filters: [], paging: {} };
  const rows: Row[] = [
    ['nothing', '', { ok: none }],
    ['ids, deduplicated and lower-cased', 'InstanceId.1=i-0000000a&InstanceId.2=I-0000000A&InstanceId.3=i-0000000b',
      { ok: { ...none, instanceIds: ['i-0000000a', 'i-0000000b'] } }],
    ['filters', 'Filter.1.Name=node&Filter.1.Value.1=127.0.12.11&Filter.2.Name=instance-state-name&Filter.2.Value.1=running&Filter.2.Value.2=pending',
      { ok: { ...none, filters: [{ name: 'node', values: ['127.0.12.11'] }, { name: 'instance-state-name', values: ['running', 'pending'] }] } }],
    ['tag filters', 'Filter.1.Name=tag:euca:node&Filter.1.Value.1=127.0.12.11&Filter.2.Name=tag-key&Filter.2.Value.1=euca:*&Filter.3.Name=tag-value&Filter.3.Value.1=x',
      { ok: { ...none, filters: [{ name: 'tag:euca:node', values: ['127.0.12.11'] }, { name: 'tag-key', values: ['euca:*'] }, { name: 'tag-value', values: ['x'] }] } }],
    ['verbose alone names no instance', 'InstanceId.1=verbose', { ok: none }],
    ['verbose in any case, beside ids that still restrict', 'InstanceId.1=i-0000000a&InstanceId.2=VERBOSE&InstanceId.3=Verbose',
      { ok: { ...none, instanceIds: ['i-0000000a'] } }],
    ['paging', 'MaxResults=5&NextToken=abc', { ok: { ...none, paging: { maxResults: 5, nextToken: 'abc' } } }],
    ['the largest page', 'MaxResults=1000', { ok: { ...none, paging: { maxResults: 1000 } } }],
    ['an empty NextToken is the first page', 'NextToken=', { ok: none }],
    ['verbose with MaxResults (verbose is no id)', 'InstanceId.1=verbose&MaxResults=10', { ok: { ...none, paging: { maxResults: 10 } } }],
    ['MaxResults below 5', 'MaxResults=4', { code: 'InvalidParameterValue', message: /MaxResults.*at least 5/ }],
    ['MaxResults above 1000', 'MaxResults=1001', { code: 'InvalidParameterValue', message: /MaxResults.*at most 1000/ }],
    ['MaxResults not a number', 'MaxResults=ten', { code: 'InvalidParameterValue', message: /MaxResults/ }],
    ['MaxResults with ids', 'InstanceId.1=i-0000000a&MaxResults=5', { code: 'InvalidParameterCombination', message: /instancesSet.*maxResults/ }],
    ['malformed id', 'InstanceId.1=i-xyz', { code: 'InvalidInstanceID.Malformed', message: /i-xyz/ }],
    ['malformed id beside verbose', 'InstanceId.1=verbose&InstanceId.2=verbosely', { code: 'InvalidInstanceID.Malformed', message: /verbosely/ }],
    ['id too long', 'InstanceId.1=i-0123456789', { code: 'InvalidInstanceID.Malformed' }],
    ['unknown filter', 'Filter.1.Name=tag-name&Filter.1.Value.1=x', { code: 'InvalidParameterValue', message: /Filter.1.Name.*tag:<key>/ }],
    ['tag: without a key', 'Filter.1.Name=tag:&Filter.1.Value.1=x', { code: 'InvalidParameterValue', message: /Filter.1.Name/ }],
    ['filter without values', 'Filter.1.Name=node', { code: 'MissingParameter', message: /Filter.1.Value.1/ }],
    ['filter without name', 'Filter.1.Value.1=x', { code: 'MissingParameter', message: /Filter.1.Name/ }],
    ['InstanceId not numbered', 'InstanceId=i-00000001', { code: 'InvalidParameterValue', message: /InstanceId/ }],
    ['unknown parameter', 'MaxItems=5', { code: 'UnknownParameter', message: /MaxItems/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDescribeInstances, q, o));
});

describe('DescribeTags', () => {
  const none = { filters: [], paging: {} };
  const rows: Row[] = [
    ['nothing', '', { ok: none }],
    ['every filter', 'Filter.1.Name=key&Filter.1.Value.1=euca:node&Filter.2.Name=value&Filter.2.Value.1=127.*&Filter.3.Name=resource-id&Filter.3.Value.1=i-0000000a'
      + '&Filter.4.Name=resource-type&Filter.4.Value.1=instance&Filter.5.Name=tag:euca:node&Filter.5.Value.1=*',
    { ok: { ...none, filters: [
      { name: 'key', values: ['euca:node'] }, { name: 'value', values: ['127.*'] }, { name: 'resource-id', values: ['i-0000000a'] },
      { name: 'resource-type', values: ['instance'] }, { name: 'tag:euca:node', values: ['*'] },
    ] } }],
    ['paging', 'MaxResults=1000&NextToken=t', { ok: { ...none, paging: { maxResults: 1000, nextToken: 't' } } }],
    ['MaxResults below 5', 'MaxResults=0', { code: 'InvalidParameterValue', message: /MaxResults/ }],
    ['unknown filter', 'Filter.1.Name=instance-id&Filter.1.Value.1=x', { code: 'InvalidParameterValue', message: /known filters: key, value, resource-id, resource-type, tag:<key>/ }],
    ['unknown parameter', 'ResourceId.1=i-0000000a', { code: 'UnknownParameter', message: /ResourceId/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDescribeTags, q, o));
});

describe('TerminateInstances', () => {
  const rows: Row[] = [
    ['ids', 'InstanceId.1=i-00000001&InstanceId.2=i-00000001', { ok: { instanceIds: ['i-00000001'] } }],
    ['no ids', '', { code: 'MissingParameter', message: /InstanceId.1/ }],
    ['malformed id', 'InstanceId.1=i-00000001&InstanceId.2=bogus', { code: 'InvalidInstanceID.Malformed', message: /bogus/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseTerminateInstances, q, o));
});

describe('CreateTags', () => {
  const rows: Row[] = [
    ['ids (any case, once each) and tags in key order; a key alone is the empty value', 'ResourceId.1=I-0000000A&ResourceId.2=i-0000000a&Tag.1.Key=b&Tag.1.Value=x&Tag.2.Key=a',
      { ok: { resourceIds: ['i-0000000a'], tags: [{ key: 'a', value: '' }, { key: 'b', value: 'x' }] } }],
    ['an empty value given', 'ResourceId.1=i-0000000a&Tag.1.Key=a&Tag.1.Value=', { ok: { resourceIds: ['i-0000000a'], tags: [{ key: 'a', value: '' }] } }],
    ['no ids', 'Tag.1.Key=a', { code: 'MissingParameter', message: /ResourceId\.1/ }],
    ['a volume id (any case) beside an instance id', 'ResourceId.1=VOL-0000000A&ResourceId.2=i-0000000a&Tag.1.Key=a',
      { ok: { resourceIds: ['vol-0000000a', 'i-0000000a'], tags: [{ key: 'a', value: '' }] } }],
    ['no tags', 'ResourceId.1=i-0000000a', { code: 'InvalidParameterValue', message: /one or more tags/ }],
    ['a malformed instance id', 'ResourceId.1=i-0000000a&ResourceId.2=i-12&Tag.1.Key=a', { code: 'InvalidInstanceID.Malformed', message: /i-12/ }],
    ['a snapshot id', 'ResourceId.1=snap-0000000a&Tag.1.Key=a', { code: 'InvalidID', message: /snap-0000000a.*instances .* and volumes .* only/ }],
    ['no EC2 id', 'ResourceId.1=web01&Tag.1.Key=a', { code: 'InvalidID', message: /web01.*not an EC2 resource id/ }],
    ['a key of 128 characters', `ResourceId.1=i-0000000a&Tag.1.Key=${'k'.repeat(128)}`, { ok: { resourceIds: ['i-0000000a'], tags: [{ key: 'k'.repeat(128), value: '' }] } }],
    ['a key of 129 characters', `ResourceId.1=i-0000000a&Tag.1.Key=${'k'.repeat(129)}`, { code: 'InvalidParameterValue', message: /Tag\.1\.Key.*128 characters/ }],
    ['a value of 257 characters', `ResourceId.1=i-0000000a&Tag.1.Key=a&Tag.1.Value=${'v'.repeat(257)}`, { code: 'InvalidParameterValue', message: /Tag\.1\.Value.*256 characters/ }],
    ['a key missing', 'ResourceId.1=i-0000000a&Tag.1.Value=v', { code: 'InvalidParameterValue', message: /^Value \(\) for parameter Tag\.1\.Key is invalid\. Tag key cannot be null or empty/ }],
    ['a reserved key', 'ResourceId.1=i-0000000a&Tag.1.Key=euca:node', { code: 'InvalidParameterValue', message: /reserved/ }],
    ['a key twice', 'ResourceId.1=i-0000000a&Tag.1.Key=a&Tag.2.Key=b&Tag.3.Key=a', { code: 'InvalidParameterValue', message: /Tag\.3\.Key.*Duplicate tag key 'a'/ }],
    ['Tag as a plain value', 'ResourceId.1=i-0000000a&Tag=a', { code: 'InvalidParameterValue', message: /numbered list/ }],
    ['an unknown member', 'ResourceId.1=i-0000000a&Tag.1.Key=a&Tag.1.Name=b', { code: 'UnknownParameter', message: /Tag\.1\.Name/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseCreateTags, q, o));
});

describe('DeleteTags', () => {
  const rows: Row[] = [
    ['no tags: every user tag', 'ResourceId.1=i-0000000a', { ok: { resourceIds: ['i-0000000a'], selectors: undefined } }],
    ['a key alone, key=value and key= stay apart', 'ResourceId.1=i-0000000a&Tag.1.Key=a&Tag.2.Key=b&Tag.2.Value=x&Tag.3.Key=c&Tag.3.Value=',
      { ok: { resourceIds: ['i-0000000a'], selectors: [{ key: 'a' }, { key: 'b', value: 'x' }, { key: 'c', value: '' }] } }],
    ['an aws: key', 'ResourceId.1=i-0000000a&Tag.1.Key=aws:x', { code: 'InvalidParameterValue', message: /reserved/ }],
    ['an empty key', 'ResourceId.1=i-0000000a&Tag.1.Key=', { code: 'InvalidParameterValue', message: /empty/ }],
    ['no ids', '', { code: 'MissingParameter', message: /ResourceId\.1/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDeleteTags, q, o));
});

describe('DescribeAvailabilityZones', () => {
  const rows: Row[] = [
    ['nothing', '', { ok: { verbose: false, zones: [], filters: [] } }],
    ['verbose', 'ZoneName.1=verbose', { ok: { verbose: true, zones: [], filters: [] } }],
    ['VERBOSE and a zone', 'ZoneName.1=VERBOSE&ZoneName.2=cluster01', { ok: { verbose: true, zones: ['cluster01'], filters: [] } }],
    ['a zone id is its name', 'ZoneId.1=cluster02&ZoneName.1=cluster02', { ok: { verbose: false, zones: ['cluster02'], filters: [] } }],
    ['AllAvailabilityZones', 'AllAvailabilityZones=true', { ok: { verbose: false, zones: [], filters: [] } }],
    ['a filter', 'Filter.1.Name=state&Filter.1.Value.1=available', { ok: { verbose: false, zones: [], filters: [{ name: 'state', values: ['available'] }] } }],
    ['unknown filter', 'Filter.1.Name=x&Filter.1.Value.1=y', { code: 'InvalidParameterValue' }],
    ['bad AllAvailabilityZones', 'AllAvailabilityZones=all', { code: 'InvalidParameterValue' }],
    ['unknown parameter', 'ZoneNames.1=x', { code: 'UnknownParameter' }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDescribeAvailabilityZones, q, o));
});

describe('DescribeServices', () => {
  const none = { type: undefined, partition: undefined, host: undefined, state: undefined, names: [], filters: [], showEvents: false };
  const rows: Row[] = [
    ['nothing', '', { ok: none }],
    ['type, any case', 'ByServiceType=NODE', { ok: { ...none, type: 'node' } }],
    ['state, any case', 'ByState=notready&ByPartition=cluster01&ByHost=127.0.12.11', { ok: { ...none, partition: 'cluster01', host: '127.0.12.11', state: 'NOTREADY' } }],
    ['a Eucalyptus state Ferry never shows', 'ByState=broken', { ok: { ...none, state: 'BROKEN' } }],
    // What euserv-describe-services sends with no argument: its store_true flags as false.
    ['euserv-describe-services', 'ListAll=false&ShowEvents=false&ShowEventStacks=false', { ok: none }],
    ['ListAll, ListInternal, ListUserServices change nothing', 'ListAll=TRUE&ListInternal=true&ListUserServices=False', { ok: none }],
    ['ShowEvents', 'ShowEvents=True', { ok: { ...none, showEvents: true } }],
    ['ShowEventStacks implies ShowEvents', 'ShowEvents=false&ShowEventStacks=true', { ok: { ...none, showEvents: true } }],
    ['service names and full names', 'ServiceName.1=127.0.12.11&ServiceName.2=arn:euca:eucalyptus:cluster01:cluster:cluster01/&ServiceName.3=nothing',
      { ok: { ...none, names: ['127.0.12.11', 'arn:euca:eucalyptus:cluster01:cluster:cluster01/', 'nothing'] } }],
    ['filters', 'Filter.1.Name=partition&Filter.1.Value.1=cluster01&Filter.1.Value.2=cluster02&Filter.2.Name=state&Filter.2.Value.1=disabled&Filter.3.Name=internal&Filter.3.Value.1=TRUE',
      { ok: { ...none, filters: [{ name: 'partition', values: ['cluster01', 'cluster02'] }, { name: 'state', values: ['disabled'] }, { name: 'internal', values: ['TRUE'] }] } }],
    ['every Eucalyptus filter name', 'Filter.1.Name=host&Filter.1.Value.1=h&Filter.2.Name=service-type&Filter.2.Value.1=node&Filter.3.Name=public&Filter.3.Value.1=false'
      + '&Filter.4.Name=service-group&Filter.4.Value.1=g&Filter.5.Name=service-group-member&Filter.5.Value.1=false&Filter.6.Name=user-service&Filter.6.Value.1=true'
      + '&Filter.7.Name=certificate-usage&Filter.7.Value.1=ssl', { ok: { ...none, filters: [
      { name: 'host', values: ['h'] }, { name: 'service-type', values: ['node'] }, { name: 'public', values: ['false'] }, { name: 'service-group', values: ['g'] },
      { name: 'service-group-member', values: ['false'] }, { name: 'user-service', values: ['true'] }, { name: 'certificate-usage', values: ['ssl'] },
    ] } }],
    ['unknown type', 'ByServiceType=walrus', { code: 'InvalidServiceType', message: /walrus/ }],
    ['unknown state', 'ByState=RUNNING', { code: 'InvalidParameterValue', message: /ByState.*BROKEN/ }],
    ['bad boolean', 'ListAll=yes', { code: 'InvalidParameterValue', message: /ListAll/ }],
    ['bad ShowEvents', 'ShowEvents=1', { code: 'InvalidParameterValue', message: /ShowEvents/ }],
    ['ServiceName not numbered', 'ServiceName=clc', { code: 'InvalidParameterValue', message: /ServiceName/ }],
    ['unknown filter', 'Filter.1.Name=availability-zone&Filter.1.Value.1=cluster01', { code: 'InvalidParameterValue', message: /Filter.1.Name.*service-type/ }],
    ['filter name in the wrong case', 'Filter.1.Name=Partition&Filter.1.Value.1=cluster01', { code: 'InvalidParameterValue', message: /Filter.1.Name/ }],
    ['bad state value', 'Filter.1.Name=state&Filter.1.Value.1=enabled&Filter.1.Value.2=running', { code: 'InvalidParameterValue', message: /running.*Filter.1.Value.2/ }],
    ['bad boolean value', 'Filter.1.Name=partition&Filter.1.Value.1=x&Filter.2.Name=public&Filter.2.Value.1=maybe', { code: 'InvalidParameterValue', message: /Filter.2.Value.1/ }],
    ['filter without values', 'Filter.1.Name=host', { code: 'MissingParameter', message: /Filter.1.Value.1/ }],
    ['unknown parameter', 'ServiceId=clc', { code: 'UnknownParameter', message: /ServiceId/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDescribeServices, q, o));
});

describe('ModifyService (Eucalyptus 4)', () => {
  const rows: Row[] = [
    ['enable a node', 'Name=127.0.12.11&State=ENABLE', { ok: { name: '127.0.12.11', state: 'ENABLE', change: 'enabled' } }],
    ['a state name, any case', 'Name=127.0.12.11&State=disabled', { ok: { name: '127.0.12.11', state: 'DISABLED', change: 'disabled' } }],
    ['DISABLE by full name', 'Name=arn:euca:eucalyptus:cluster01:node:127.0.12.11/&State=Disable',
      { ok: { name: 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/', state: 'DISABLE', change: 'disabled' } }],
    ['STOP parses, changing nothing', 'Name=127.0.12.11&State=stop', { ok: { name: '127.0.12.11', state: 'STOP', change: undefined } }],
    ['RESTART', 'Name=clc&State=RESTART', { ok: { name: 'clc', state: 'RESTART', change: undefined } }],
    ['a name that names nothing still parses (NotFound comes later)', 'Name=walrus&State=ENABLED', { ok: { name: 'walrus', state: 'ENABLED', change: 'enabled' } }],
    ['missing State', 'Name=127.0.12.11', { code: 'MissingParameter', message: /State/ }],
    ['missing Name', 'State=ENABLE', { code: 'MissingParameter', message: /Name/ }],
    ['empty Name', 'Name=&State=ENABLE', { code: 'InvalidParameterValue', message: /Name/ }],
    ['unknown State', 'Name=127.0.12.11&State=maintenance', { code: 'InvalidParameterValue', message: /State.*START, STOP.*BROKEN/ }],
    ['State as a list', 'Name=127.0.12.11&State.1=ENABLE', { code: 'InvalidParameterValue', message: /State/ }],
    ['unknown parameter', 'Name=127.0.12.11&State=ENABLE&Partition=cluster01', { code: 'UnknownParameter', message: /Partition/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseModifyServiceByName, q, o));
});

describe('DescribeNodes', () => {
  const rows: Row[] = [
    ['nothing', '', { ok: { partition: undefined, host: undefined } }],
    ['by partition', 'ByPartition=cluster01', { ok: { partition: 'cluster01', host: undefined } }],
    ['unknown parameter', 'Verbose=1', { code: 'UnknownParameter' }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseDescribeNodes, q, o));
});

describe('EnableService / DisableService', () => {
  const rows: Row[] = [
    ['host', 'Type=NODE&Host=127.0.12.11', { ok: { host: '127.0.12.11', partition: undefined } }],
    ['host in partition, lower-case type', 'Type=node&Host=127.0.12.11&Partition=cluster01', { ok: { host: '127.0.12.11', partition: 'cluster01' } }],
    ['service id', 'Type=Node&ServiceId=arn:euca:eucalyptus:cluster02:node:127.0.12.21/', { ok: { host: '127.0.12.21', partition: 'cluster02' } }],
    ['service id with the same partition', 'Type=NODE&Partition=cluster02&ServiceId=arn:euca:eucalyptus:cluster02:node:127.0.12.21/', { ok: { host: '127.0.12.21', partition: 'cluster02' } }],
    ['missing Type', 'Host=127.0.12.11', { code: 'MissingParameter', message: /Type/ }],
    ['wrong Type', 'Type=CLUSTER&Host=127.0.12.11', { code: 'InvalidServiceType', message: /CLUSTER/ }],
    ['service id of another type', 'Type=NODE&ServiceId=arn:euca:eucalyptus:cluster01:cluster:cluster01/', { code: 'InvalidServiceType' }],
    ['neither Host nor ServiceId', 'Type=NODE', { code: 'MissingParameter', message: /Host/ }],
    ['both Host and ServiceId', 'Type=NODE&Host=127.0.12.11&ServiceId=arn:euca:eucalyptus:cluster01:node:127.0.12.11/', { code: 'InvalidParameterCombination' }],
    ['partition differs from service id', 'Type=NODE&Partition=cluster01&ServiceId=arn:euca:eucalyptus:cluster02:node:127.0.12.21/', { code: 'InvalidParameterCombination' }],
    ['host not an address', 'Type=NODE&Host=node-1', { code: 'InvalidParameterValue', message: /Host/ }],
    ['malformed service id', 'Type=NODE&ServiceId=node-1', { code: 'InvalidParameterValue', message: /ServiceId/ }],
    ['malformed partition', 'Type=NODE&Host=127.0.12.11&Partition=-bad', { code: 'InvalidParameterValue', message: /Partition/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseModifyService, q, o));
});

describe('envelope', () => {
  const rows: Row[] = [
    ['action and version split off', 'Action=DescribeNodes&Version=2013-02-01&AWSAccessKeyId=AK&ByHost=h',
      { ok: { action: 'DescribeNodes', version: '2013-02-01', params: { ByHost: 'h' } } }],
    ['SigV4 parameters split off', 'Action=DescribeNodes&X-Amz-Date=1&X-Amz-Signature=s', { ok: { action: 'DescribeNodes', version: undefined, params: {} } }],
    ['missing Action', 'Version=2013-02-01', { code: 'MissingParameter', message: /Action/ }],
    ['empty Action', 'Action=', { code: 'MissingParameter', message: /Action/ }],
    ['Action as a list', 'Action.1=DescribeNodes', { code: 'InvalidParameterValue', message: /Action/ }],
    ['malformed Version', 'Action=DescribeNodes&Version=latest', { code: 'InvalidParameterValue', message: /Version/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check((p) => JSON.parse(JSON.stringify(splitEnvelope(p))) as unknown, q, o));
});

describe('parsed inputs are frozen', () => {
  it('deeply', () => {
    const input = parseDescribeInstances(parseQueryParams(new URLSearchParams('Filter.1.Name=node&Filter.1.Value.1=x')));
    expect(Object.isFrozen(input)).toBe(true);
    expect(Object.isFrozen(input.filters[0])).toBe(true);
    expect(Object.isFrozen(input.filters[0]?.values)).toBe(true);
  });
});
