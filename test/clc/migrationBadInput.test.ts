/**
 * One test per class of bad input to MigrateInstances, DescribeMigrations and CancelMigration,
 * through the whole HTTP pipeline with the fake Clusters. Each checks the code, the HTTP status and
 * the error document, and that nothing changed or was reserved: the fake CCs hold what they held
 * (nodes, instances, plans, reservations) and the CLC's store is as it was. Refusals the CLC makes
 * itself reach no CC with a change at all; the CC's own refusals (translated by ccFaults.ts) are
 * the one change request, refused.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ClcErrors } from '../../clc/core/errors.js';
import { FakeClusters } from './fakeClusters.js';
import { harness, launchRunning, query, type Harness, type QueryReply } from './harness.js';

let h: Harness;
let onSource: string[];

/** cluster01: .11 runs two running c1.medium (full), .12 and .13 empty; .14 unreachable. cluster02: .21 empty. */
beforeEach(async () => {
  h = await harness({
    clusters: new FakeClusters({
      cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }, { host: '127.0.12.14', reachable: false }],
      cluster02: [{ host: '127.0.12.21' }],
    }),
  });
  onSource = await launchRunning(h, 'cluster01', 'c1.medium', 2);
  h.clusters.calls.length = 0;
});

interface Before { mutating: number; cloud: string; store: string }
const before = (): Before => ({ mutating: h.clusters.mutatingCalls().length, cloud: h.clusters.snapshot(), store: JSON.stringify(h.store.read()) });

/** The request is refused with `code` and `status`, and nothing changed; `changesSent` change requests reached a CC (and were refused). */
async function refused(params: Record<string, string>, code: string, status: number, changesSent = 0): Promise<QueryReply> {
  const snap = before();
  const r = await query(h.app, params);
  expect(r.status, r.text).toBe(status);
  expect(ClcErrors.has(code)).toBe(true);
  expect(ClcErrors.table[code as keyof typeof ClcErrors.table].status).toBe(status);
  expect(r.doc.Response?.Errors?.Error?.Code).toBe(code);
  expect(typeof r.doc.Response?.Errors?.Error?.Message).toBe('string');
  expect(r.doc.Response?.RequestID).toBe('req-1');
  expect(h.clusters.mutatingCalls().length - snap.mutating).toBe(changesSent);
  expect(h.clusters.snapshot()).toBe(snap.cloud);
  expect(JSON.stringify(h.store.read())).toBe(snap.store);
  return r;
}

const message = (r: QueryReply): string => r.doc.Response.Errors.Error.Message as string;

describe('MigrateInstances refused by the CLC', () => {
  it('both SourceHost and InstanceId', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', InstanceId: onSource[0] as string }, 'InvalidParameterCombination', 400);
    expect(h.clusters.calls).toEqual([]);
  });

  it('neither SourceHost nor InstanceId', async () => {
    const r = await refused({ Action: 'MigrateInstances', 'DestinationHost.1': '127.0.12.12' }, 'InvalidParameterCombination', 400);
    expect(message(r)).toContain('exactly one of SourceHost');
    expect(h.clusters.calls).toEqual([]);
  });

  it('malformed host', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12' }, 'InvalidParameterValue', 400);
    expect(h.clusters.calls).toEqual([]);
  });

  it('malformed instance id', async () => {
    await refused({ Action: 'MigrateInstances', InstanceId: 'i-123' }, 'InvalidInstanceID.Malformed', 400);
    expect(h.clusters.calls).toEqual([]);
  });

  it('malformed boolean', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', Partial: 'maybe' }, 'InvalidParameterValue', 400);
  });

  it('unknown source host', async () => {
    const r = await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.99' }, 'InvalidHost.NotFound', 400);
    expect(message(r)).toContain('127.0.12.99');
  });

  it('unknown instance', async () => {
    const r = await refused({ Action: 'MigrateInstances', InstanceId: 'i-0000dead' }, 'InvalidInstanceID.NotFound', 400);
    expect(message(r)).toContain('i-0000dead');
  });

  it('a terminated instance', async () => {
    h.clusters.setInstanceState(onSource[0] as string, 'terminated');
    const r = await refused({ Action: 'MigrateInstances', InstanceId: onSource[0] as string }, 'IncorrectInstanceState', 409);
    expect(message(r)).toContain('terminated');
  });

  it('the source host\'s partition does not answer', async () => {
    h.clusters.down.add('cluster02');
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.21' }, 'ServiceUnavailable', 503);
  });
});

describe('MigrateInstances refused by the CC, translated', () => {
  it('the instance is not running', async () => {
    h.clusters.setInstanceState(onSource[0] as string, 'pending');
    const r = await refused({ Action: 'MigrateInstances', InstanceId: onSource[0] as string }, 'IncorrectInstanceState', 409, 1);
    expect(message(r)).toContain('pending');
  });

  it('the only allowed destination is the source', async () => {
    const r = await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', 'DestinationHost.1': '127.0.12.11' }, 'InvalidParameterCombination', 400, 1);
    expect(message(r)).toBe('destination 127.0.12.11 is the source of the migration');
  });

  it('the source among the allowed destinations', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', 'DestinationHost.1': '127.0.12.12', 'DestinationHost.2': '127.0.12.11' }, 'InvalidParameterCombination', 400, 1);
  });

  it('a destination that is not a node of the partition', async () => {
    const r = await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', 'DestinationHost.1': '127.0.12.21' }, 'InvalidHost.NotFound', 400, 1);
    expect(message(r)).toContain('127.0.12.21');
  });

  it('only unusable hosts are allowed', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', 'DestinationHost.1': '127.0.12.14' }, 'NoEligibleDestination', 409, 1);
  });

  it('every node is forbidden', async () => {
    await refused({
      Action: 'MigrateInstances', SourceHost: '127.0.12.11', AllowHosts: 'false',
      'DestinationHost.1': '127.0.12.12', 'DestinationHost.2': '127.0.12.13',
    }, 'NoEligibleDestination', 409, 1);
  });

  it('a second drain of the same node', async () => {
    const first = await query(h.app, { Action: 'MigrateInstances', SourceHost: '127.0.12.11' });
    expect(first.status).toBe(200);
    const r = await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11' }, 'MigrationInProgress', 409, 1);
    expect(message(r)).toContain(first.doc.MigrateInstancesResponse.migrationId);
  });

  it('an instance already migrating', async () => {
    expect((await query(h.app, { Action: 'MigrateInstances', InstanceId: onSource[0] as string })).status).toBe(200);
    await refused({ Action: 'MigrateInstances', InstanceId: onSource[0] as string }, 'MigrationInProgress', 409, 1);
  });

  it('not enough room, all or nothing', async () => {
    await launchRunning(h, 'cluster01', 'c1.medium'); // lands on .12, which keeps room for one c1.medium
    const r = await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.11', 'DestinationHost.1': '127.0.12.12' }, 'InsufficientCapacityForMigration', 503, 1);
    expect(message(r)).toContain(`${onSource[1]} (insufficient-capacity)`);
  });

  it('a node with nothing to migrate', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.13' }, 'NothingToMigrate', 409, 1);
  });

  it('the source node is unreachable', async () => {
    await refused({ Action: 'MigrateInstances', SourceHost: '127.0.12.14' }, 'ServiceUnavailable', 503, 1);
  });
});

describe('DescribeMigrations and CancelMigration', () => {
  it('malformed migration id (describe)', async () => {
    await refused({ Action: 'DescribeMigrations', 'MigrationId.1': 'mig-xyz' }, 'InvalidMigrationID.Malformed', 400);
    expect(h.clusters.calls).toEqual([]);
  });

  it('unknown migration id (describe) names every unknown id', async () => {
    const r = await refused({ Action: 'DescribeMigrations', 'MigrationId.1': 'mig-0000dead', 'MigrationId.2': 'mig-0000beef' }, 'InvalidMigrationID.NotFound', 400);
    expect(message(r)).toBe("The migration IDs 'mig-0000dead, mig-0000beef' do not exist");
  });

  it('unknown migration id while a partition does not answer (describe) is not a NotFound', async () => {
    h.clusters.down.add('cluster02');
    await refused({ Action: 'DescribeMigrations', 'MigrationId.1': 'mig-0000dead' }, 'ServiceUnavailable', 503);
  });

  it('malformed migration id (cancel)', async () => {
    await refused({ Action: 'CancelMigration', MigrationId: 'mig-1' }, 'InvalidMigrationID.Malformed', 400);
    expect(h.clusters.calls).toEqual([]);
  });

  it('missing migration id (cancel)', async () => {
    await refused({ Action: 'CancelMigration' }, 'MissingParameter', 400);
  });

  it('unknown migration id (cancel)', async () => {
    const r = await refused({ Action: 'CancelMigration', MigrationId: 'mig-0000dead' }, 'InvalidMigrationID.NotFound', 400);
    expect(message(r)).toContain('mig-0000dead');
  });

  it('a migration that already finished (cancel)', async () => {
    const m = await query(h.app, { Action: 'MigrateInstances', InstanceId: onSource[0] as string });
    for (let i = 0; i < 5; i++) h.clusters.advanceMigrations();
    const r = await refused({ Action: 'CancelMigration', MigrationId: m.doc.MigrateInstancesResponse.migrationId }, 'MigrationAlreadyFinished', 409, 1);
    expect(message(r)).toContain('has already finished');
  });
});
