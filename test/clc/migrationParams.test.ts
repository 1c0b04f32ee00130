/** Parameter validation of MigrateInstances, DescribeMigrations and CancelMigration, table-driven, without a server. */
import { describe, expect, it } from 'vitest';
import { parseCancelMigration } from '../../clc/api/actions/cancelMigration.js';
import { parseDescribeMigrations } from '../../clc/api/actions/describeMigrations.js';
import { parseMigrateInstances } from '../../clc/api/actions/migrateInstances.js';
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

const drain = (extra: object = {}) => ({
  sourceHost: '127.0.12.11', instanceId: undefined, destinations: [], allowHosts: true, reserveDestinations: false, partial: false, ...extra,
});

describe('MigrateInstances', () => {
  const rows: Row[] = [
    ['drain with defaults', 'SourceHost=127.0.12.11', { ok: drain() }],
    ['one instance, id lower-cased', 'InstanceId=I-0000000A', { ok: drain({ sourceHost: undefined, instanceId: 'i-0000000a' }) }],
    ['allowed destinations, deduplicated', 'SourceHost=127.0.12.11&DestinationHost.1=127.0.12.12&DestinationHost.2=127.0.12.13&DestinationHost.3=127.0.12.12',
      { ok: drain({ destinations: ['127.0.12.12', '127.0.12.13'] }) }],
    ['forbidden destinations', 'SourceHost=127.0.12.11&DestinationHost.1=127.0.12.12&AllowHosts=false',
      { ok: drain({ destinations: ['127.0.12.12'], allowHosts: false }) }],
    ['booleans in any case', 'SourceHost=127.0.12.11&AllowHosts=FALSE&ReserveDestinations=True&Partial=true',
      { ok: drain({ allowHosts: false, reserveDestinations: true, partial: true }) }],
    ['both SourceHost and InstanceId', 'SourceHost=127.0.12.11&InstanceId=i-0000000a', { code: 'InvalidParameterCombination', message: /exactly one of SourceHost/ }],
    ['neither SourceHost nor InstanceId', '', { code: 'InvalidParameterCombination', message: /exactly one of SourceHost/ }],
    ['neither, only destinations', 'DestinationHost.1=127.0.12.12', { code: 'InvalidParameterCombination' }],
    ['malformed SourceHost', 'SourceHost=node-1', { code: 'InvalidParameterValue', message: /SourceHost.*IPv4/ }],
    ['malformed InstanceId', 'InstanceId=i-xyz', { code: 'InvalidInstanceID.Malformed', message: /i-xyz/ }],
    ['malformed destination', 'SourceHost=127.0.12.11&DestinationHost.1=127.0.12.12&DestinationHost.2=nope', { code: 'InvalidParameterValue', message: /DestinationHost\.2/ }],
    ['destinations as one value', 'SourceHost=127.0.12.11&DestinationHost=127.0.12.12', { code: 'InvalidParameterValue', message: /DestinationHost/ }],
    ['AllowHosts not a boolean', 'SourceHost=127.0.12.11&AllowHosts=yes', { code: 'InvalidParameterValue', message: /AllowHosts.*true or false/ }],
    ['Partial not a boolean', 'SourceHost=127.0.12.11&Partial=1', { code: 'InvalidParameterValue', message: /Partial/ }],
    ['ReserveDestinations empty', 'SourceHost=127.0.12.11&ReserveDestinations=', { code: 'InvalidParameterValue', message: /ReserveDestinations/ }],
    ['unknown parameter', 'SourceHost=127.0.12.11&Force=true', { code: 'UnknownParameter', message: /Force/ }],
    ['SourceHost given as a list', 'SourceHost.1=127.0.12.11', { code: 'InvalidParameterValue', message: /SourceHost/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseMigrateInstances, q, o));
});

describe('DescribeMigrations', () => {
  const rows: Row[] = [
    ['all', '', { ok: { migrationIds: [] } }],
    ['ids, lower-cased and deduplicated', 'MigrationId.1=mig-0000000A&MigrationId.2=mig-0000000a&MigrationId.3=mig-0000000b',
      { ok: { migrationIds: ['mig-0000000a', 'mig-0000000b'] } }],
    ['malformed id', 'MigrationId.1=mig-1', { code: 'InvalidMigrationID.Malformed', message: /mig-1/ }],
    ['an instance id is not a migration id', 'MigrationId.1=i-0000000a', { code: 'InvalidMigrationID.Malformed' }],
    ['list with a gap', 'MigrationId.2=mig-0000000a', { code: 'MalformedQueryString' }],
    ['unknown parameter', 'Filter.1.Name=state&Filter.1.Value.1=active', { code: 'UnknownParameter', message: /Filter/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => {
    if ('code' in o && o.code === 'MalformedQueryString') {
      expect(() => parseQueryParams(new URLSearchParams(q))).toThrow(expect.objectContaining({ code: 'MalformedQueryString' }));
      return;
    }
    check(parseDescribeMigrations, q, o);
  });
});

describe('CancelMigration', () => {
  const rows: Row[] = [
    ['an id', 'MigrationId=mig-0000abcd', { ok: { migrationId: 'mig-0000abcd' } }],
    ['upper case', 'MigrationId=MIG-0000ABCD', { ok: { migrationId: 'mig-0000abcd' } }],
    ['missing', '', { code: 'MissingParameter', message: /MigrationId/ }],
    ['malformed', 'MigrationId=0000abcd', { code: 'InvalidMigrationID.Malformed', message: /0000abcd/ }],
    ['a list', 'MigrationId.1=mig-0000abcd', { code: 'InvalidParameterValue', message: /MigrationId/ }],
    ['unknown parameter', 'MigrationId=mig-0000abcd&Force=true', { code: 'UnknownParameter', message: /Force/ }],
  ];
  it.each(rows)('%s', (_n, q, o) => check(parseCancelMigration, q, o));
});
