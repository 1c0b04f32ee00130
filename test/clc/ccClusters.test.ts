/**
 * The real Clusters adapter: CC failures are translated into the admin registry at this boundary.
 * Table-driven over a fake WireTransport, then over real HTTP against a stub CC on 127.0.12.1.
 */
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCcClusters } from '../../clc/clusters/ccClusters.js';
import { translateCcFailure } from '../../clc/clusters/ccFaults.js';
import { ClcErrors } from '../../clc/core/errors.js';
import { defineErrors, client, server, FerryError } from '../../shared/errors/registry.js';
import { silentLogger } from '../../shared/log.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { CC_OPS } from '../../shared/protocol/ccProtocol.js';
import { typedHandlers } from '../../shared/protocol/typedServer.js';
import { WireErrors } from '../../shared/wire/errors.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { mountWireService } from '../../shared/wire/server.js';
import { CC_PATH, type WireTransport } from '../../shared/wire/transport.js';
import { notLeaderText } from '../../shared/leader/leaderRouting.js';

const HOST = '127.0.12.1';
const remote = (remoteCode: string) => WireErrors.make('RemoteFault', { peer: 'cc', operation: 'op', remoteCode, remoteMessage: `cc says ${remoteCode}`, remoteStatus: 409 });

describe('translateCcFailure', () => {
  const rows: [string, unknown, string, string][] = [
    ['connection refused', WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNREFUSED' }), 'ServiceUnavailable', 'no'],
    ['connection reset', WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNRESET' }), 'ServiceUnavailable', 'maybe'],
    ['timeout', WireErrors.make('PeerTimeout', { peer: 'cc', operation: 'op', timeoutMs: 5 }), 'ServiceUnavailable', 'maybe'],
    ['garbage answer', WireErrors.make('PeerProtocolError', { peer: 'cc', operation: 'op', detail: 'x' }), 'ServiceUnavailable', 'maybe'],
    ['NodeNotFound', remote('NodeNotFound'), 'InvalidHost.NotFound', 'yes'],
    ['InstanceNotFound', remote('InstanceNotFound'), 'InvalidInstanceID.NotFound', 'yes'],
    ['InsufficientInstanceCapacity', remote('InsufficientInstanceCapacity'), 'InsufficientInstanceCapacity', 'yes'],
    ['NodeUnreachable', remote('NodeUnreachable'), 'ServiceUnavailable', 'yes'],
    ['no CC replica leads (issue 21)', remote('NotLeader'), 'ServiceUnavailable', 'maybe'],
    ['the CC leader was deposed mid-way', remote('NodeSawNewerLeader'), 'ServiceUnavailable', 'maybe'],
    ['the CC leader could not confirm its leadership with etcd (nothing started)', remote('LeadershipUnconfirmed'), 'ServiceUnavailable', 'no'],
    ['StateWriteFailed (a node\'s full disk: its own code)', remote('StateWriteFailed'), 'StateWriteFailed', 'yes'],
    ['InstanceNotRunning', remote('InstanceNotRunning'), 'IncorrectInstanceState', 'yes'],
    ['DestinationIsSource', remote('DestinationIsSource'), 'InvalidParameterCombination', 'yes'],
    ['the CC\'s InvalidParameterCombination', remote('InvalidParameterCombination'), 'InvalidParameterCombination', 'yes'],
    ['NothingToMigrate', remote('NothingToMigrate'), 'NothingToMigrate', 'yes'],
    ['NoEligibleDestination', remote('NoEligibleDestination'), 'NoEligibleDestination', 'yes'],
    ['InsufficientCapacityForMigration', remote('InsufficientCapacityForMigration'), 'InsufficientCapacityForMigration', 'yes'],
    ['MigrationInProgress', remote('MigrationInProgress'), 'MigrationInProgress', 'yes'],
    ['MigrationNotFound', remote('MigrationNotFound'), 'InvalidMigrationID.NotFound', 'yes'],
    ['MigrationAlreadyFinished', remote('MigrationAlreadyFinished'), 'MigrationAlreadyFinished', 'yes'],
    ['StaleLeaderEpoch (issue 21: a deposed CLC leader\'s command)', remote('StaleLeaderEpoch'), 'NotLeader', 'yes'],
    ['an NC-only migration code', remote('MigrationNotPrepared'), 'InternalError', 'yes'],
    ['a CC code we do not expect', remote('InvalidParameter'), 'InternalError', 'yes'],
    ['not a coded error at all', new TypeError('boom'), 'InternalError', 'maybe'],
  ];
  it.each(rows)('%s', (_n, err, code, delivered) => {
    const t = translateCcFailure(err, 'cluster01', 'ccRunInstances');
    expect(t.code).toBe(code);
    expect(ClcErrors.has(t.code)).toBe(true);
    expect(t.fields.delivered).toBe(delivered);
  });

  it('keeps the CC\'s message for the admin', () => {
    expect(translateCcFailure(remote('NodeNotFound'), 'cluster01', 'ccModifyNode').message).toBe('cc says NodeNotFound');
  });

  it('names the node\'s failed state write with the NC\'s words and what to fix, as a 503 a retry can cure', () => {
    const t = translateCcFailure(WireErrors.make('RemoteFault', {
      peer: 'cc', operation: 'ccModifyNode', remoteCode: 'StateWriteFailed', remoteStatus: 503,
      remoteMessage: 'node 127.0.1.1 could not persist its state: store /x/nc.json could not be written: ENOSPC: no space left on device, write',
    }), 'cluster01', 'ccModifyNode');
    expect({ code: t.code, status: t.status, retryable: t.retryable }).toEqual({ code: 'StateWriteFailed', status: 503, retryable: true });
    expect(t.message).toContain('node 127.0.1.1 could not persist its state: store /x/nc.json could not be written: ENOSPC');
    expect(t.message).toContain('Free space on (or repair) the disk');
  });

  it('is idempotent', () => {
    const once = translateCcFailure(remote('InstanceNotFound'), 'cluster01', 'op');
    expect(translateCcFailure(once, 'cluster01', 'op')).toBe(once);
  });
});

describe('createCcClusters over a fake transport', () => {
  it('calls the partition\'s endpoint and translates failures', async () => {
    const seen: string[] = [];
    const transport: WireTransport = {
      call: async (endpoint, op) => {
        seen.push(`${endpoint} ${op}`);
        throw WireErrors.make('PeerUnreachable', { peer: endpoint, detail: 'ECONNREFUSED' });
      },
    };
    const clusters = createCcClusters({ partitions: [{ name: 'cluster01', endpoint: 'http://127.0.12.9:8774' }], transport, timeoutMs: 100 });
    await expect(clusters.call('cluster01', 'ccDescribeNodes', {})).rejects.toMatchObject({ code: 'ServiceUnavailable', fields: { partition: 'cluster01', delivered: 'no' } });
    await expect(clusters.call('cluster09', 'ccDescribeNodes', {})).rejects.toMatchObject({ code: 'InternalError' });
    expect(seen).toEqual(['http://127.0.12.9:8774 ccDescribeNodes']);
  });

  it('the calls that start or stop guests get the instance bound, the others the quick one', async () => {
    const seen: [string, number | undefined][] = [];
    const transport: WireTransport = {
      call: async (_endpoint, op, _body, opts) => {
        seen.push([op, opts?.timeoutMs]);
        throw WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNREFUSED' });
      },
    };
    const clusters = createCcClusters({ partitions: [{ name: 'cluster01', endpoint: 'http://127.0.12.9:8774' }], transport, timeoutMs: 100, instanceTimeoutMs: 9000 });
    await clusters.call('cluster01', 'ccRunInstances', {
      reservationId: 'r-00000001', imageId: 'emi-0a1b2c3d', ownerId: 'admin', vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }, instanceIds: ['i-00000001'], minCount: 1, launchTime: 1,
    }).catch(() => undefined);
    await clusters.call('cluster01', 'ccTerminateInstances', { instanceIds: ['i-00000001'] }).catch(() => undefined);
    await clusters.call('cluster01', 'ccDescribeNodes', {}).catch(() => undefined);
    await clusters.call('cluster01', 'ccModifyNode', { host: '127.0.12.11', stateName: 'disabled', vmTypes: DEFAULT_VM_TYPES.map((t) => ({ ...t })) }).catch(() => undefined);
    expect(seen).toEqual([['ccRunInstances', 9000], ['ccTerminateInstances', 9000], ['ccDescribeNodes', 100], ['ccModifyNode', 100]]);
  });

  it('CC replicas (issue 21): a change goes to the leader a follower names, and the next one straight there', async () => {
    const A = 'http://127.0.96.1:19860';
    const B = 'http://127.0.96.2:19861';
    const seen: string[] = [];
    const transport: WireTransport = {
      call: async (endpoint, op) => {
        seen.push(`${endpoint} ${op}`);
        if (endpoint === A) throw WireErrors.make('RemoteFault', { peer: A, operation: op, remoteCode: 'NotLeader', remoteMessage: `CC replica ${A} of partition cluster01 does not lead: ${notLeaderText(A, B)}` });
        return { partition: 'cluster01', nodes: [] };
      },
    };
    const clusters = createCcClusters({ partitions: [{ name: 'cluster01', endpoint: A, endpoints: [A, B] }], transport, timeoutMs: 100 });
    await expect(clusters.call('cluster01', 'ccDescribeNodes', {})).resolves.toEqual({ partition: 'cluster01', nodes: [] });
    await clusters.call('cluster01', 'ccDescribeNodes', {});
    expect(seen).toEqual([`${A} ccDescribeNodes`, `${B} ccDescribeNodes`, `${B} ccDescribeNodes`]);
  });

  it('a reply outside the contract is ServiceUnavailable', async () => {
    const transport: WireTransport = { call: async () => ({ partition: 'cluster01', nodes: 'no' }) };
    const clusters = createCcClusters({ partitions: [{ name: 'cluster01', endpoint: 'http://127.0.12.9:8774' }], transport, timeoutMs: 100 });
    await expect(clusters.call('cluster01', 'ccDescribeNodes', {})).rejects.toMatchObject({ code: 'ServiceUnavailable', fields: { delivered: 'maybe' } });
  });
});

describe('createCcClusters over real HTTP', () => {
  /** The CC's own codes, as its registry would define them (the CLC may not import cc/). */
  const StubCcErrors = defineErrors({
    NodeNotFound: client(404, 'node {host} is not registered in partition {partition}'),
    NodeUnreachable: server(503, 'node {host} is unreachable'),
    InstanceNotRunning: client(409, 'instance {instanceId} is {state}; only running instances can be migrated'),
    MigrationNotFound: client(404, 'migration {migrationId} is not known in partition {partition}'),
  });
  let stub: Server;
  let closedPort: number;
  let url: string;
  const transport = new HttpWireTransport({ path: CC_PATH });

  beforeAll(async () => {
    const app = express();
    const node = {
      host: '127.0.12.11', partition: 'cluster01', nodeState: 'enabled' as const, reachable: true, healthy: true, lastSeen: 1,
      capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, used: { cores: 0, memoryMiB: 0, diskGiB: 0 }, instances: [],
    };
    // Every CC operation, migration ones included, so this stub still type-checks once they fold into CC_OPS.
    const handlers = typedHandlers(CC_OPS, {
      ccDescribeNodes: async () => ({ partition: 'cluster01', nodes: [node] }),
      ccDescribeNodeHealth: async () => ({ partition: 'cluster01', version: 'v1', hosts: [] }),
      ccDescribeResources: async () => {
        await new Promise((r) => setTimeout(r, 500));
        return { partition: 'cluster01', matrix: [] };
      },
      ccDescribeInstances: async () => ({ partition: 'cluster01', instances: [] }),
      ccRunInstances: async () => { throw new FerryError('InsufficientInstanceCapacity', { status: 409, message: 'only 0 of 1 fit', clientFault: false, retryable: true }); },
      ccTerminateInstances: async () => ({ instances: [] }),
      ccStartInstances: async () => ({ started: [], failed: [] }),
      ccModifyNode: async (req) => {
        if (req.host === '127.0.12.13') throw StubCcErrors.make('NodeUnreachable', { host: req.host });
        throw StubCcErrors.make('NodeNotFound', { host: req.host, partition: 'cluster01' });
      },
      ccQuarantineNode: async (req) => { throw StubCcErrors.make('NodeNotFound', { host: req.host, partition: 'cluster01' }); },
      ccMigrateInstances: async (req) => {
        throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId ?? '', state: 'pending' });
      },
      ccDescribeMigrations: async () => ({ partition: 'cluster01', migrations: [] }),
      ccCancelMigration: async (req) => { throw StubCcErrors.make('MigrationNotFound', { migrationId: req.migrationId, partition: 'cluster01' }); },
      ccNodeEvent: async () => ({}),
      ccCheckHostActivity: async (req) => ({ host: req.host, outcome: 'unknown' as const, detail: 'stub', checkedBy: '', newestWriteAt: null }),
      ccSetFencedHosts: async (req) => ({ hosts: req.hosts }),
      ccAttachVolume: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccDetachVolume: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccPauseInstance: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccStopInstance: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccRebootInstance: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccStartInstance: async (req) => { throw StubCcErrors.make('InstanceNotRunning', { instanceId: req.instanceId, state: 'pending' }); },
      ccDescribeReplica: async () => ({ partition: 'cluster01', self: url, leading: true, leaderUrl: url, epoch: '42' }),
    });
    mountWireService(app, { path: CC_PATH, handlers, logger: silentLogger() });
    stub = await new Promise<Server>((resolve) => { const s = app.listen(0, HOST, () => resolve(s)); });
    url = `http://${HOST}:${(stub.address() as AddressInfo).port}`;
    const closed = await new Promise<Server>((resolve) => { const s = express().listen(0, HOST, () => resolve(s)); });
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
  });

  afterAll(async () => {
    transport.close();
    stub.closeAllConnections();
    await new Promise((r) => stub.close(r));
  });

  const clustersAt = (endpoint: string, timeoutMs = 2000) =>
    createCcClusters({ partitions: [{ name: 'cluster01', endpoint }], transport, timeoutMs });

  it('answers pass through, validated', async () => {
    const r = await clustersAt(url).call('cluster01', 'ccDescribeNodes', {});
    expect(r.nodes.map((n) => n.host)).toEqual(['127.0.12.11']);
  });

  it('NodeNotFound → InvalidHost.NotFound', async () => {
    await expect(clustersAt(url).call('cluster01', 'ccModifyNode', { host: '127.0.12.99', stateName: 'disabled', vmTypes: [...DEFAULT_VM_TYPES] }))
      .rejects.toMatchObject({ code: 'InvalidHost.NotFound', message: expect.stringContaining('127.0.12.99') });
  });

  it('NodeUnreachable → ServiceUnavailable', async () => {
    await expect(clustersAt(url).call('cluster01', 'ccModifyNode', { host: '127.0.12.13', stateName: 'disabled', vmTypes: [...DEFAULT_VM_TYPES] }))
      .rejects.toMatchObject({ code: 'ServiceUnavailable', status: 503 });
  });

  it('InsufficientInstanceCapacity passes as ours', async () => {
    await expect(clustersAt(url).call('cluster01', 'ccRunInstances', {
      reservationId: 'r-00000001', imageId: 'emi-00000001', ownerId: '000000000000', vmType: { ...DEFAULT_VM_TYPES[1]! },
      instanceIds: ['i-00000001'], minCount: 1, launchTime: 0,
    })).rejects.toMatchObject({ code: 'InsufficientInstanceCapacity', fields: { delivered: 'yes' } });
  });

  it('live migration: InstanceNotRunning → IncorrectInstanceState, MigrationNotFound → InvalidMigrationID.NotFound', async () => {
    await expect(clustersAt(url).call('cluster01', 'ccMigrateInstances', {
      instanceId: 'i-00000001', destinations: [], allowHosts: true, reserveDestinations: false, partial: false, vmTypes: [...DEFAULT_VM_TYPES],
    })).rejects.toMatchObject({ code: 'IncorrectInstanceState', status: 409, message: 'instance i-00000001 is pending; only running instances can be migrated' });
    await expect(clustersAt(url).call('cluster01', 'ccCancelMigration', { migrationId: 'mig-0000dead' }))
      .rejects.toMatchObject({ code: 'InvalidMigrationID.NotFound', message: expect.stringContaining('mig-0000dead') });
    await expect(clustersAt(url).call('cluster01', 'ccDescribeMigrations', {})).resolves.toEqual({ partition: 'cluster01', migrations: [] });
  });

  it('describeReplicas asks every configured replica directly: an answer each, or the failure of one that does not answer', async () => {
    const dead = `http://${HOST}:${closedPort}`;
    const clusters = createCcClusters({ partitions: [{ name: 'cluster01', endpoint: dead, endpoints: [dead, url] }], transport, timeoutMs: 2000 });
    const answers = await clusters.describeReplicas!('cluster01');
    expect(answers.map((a) => a.url)).toEqual([dead, url]);
    expect(answers[0]).toMatchObject({ failure: { code: 'ServiceUnavailable' } });
    expect(answers[1]).toEqual({ url, report: { partition: 'cluster01', self: url, leading: true, leaderUrl: url, epoch: '42' } });
    await expect(clusters.describeReplicas!('nowhere')).rejects.toMatchObject({ code: 'InternalError' });
  });

  it('a closed port → ServiceUnavailable, not delivered', async () => {
    await expect(clustersAt(`http://${HOST}:${closedPort}`).call('cluster01', 'ccDescribeNodes', {}))
      .rejects.toMatchObject({ code: 'ServiceUnavailable', fields: { delivered: 'no' } });
  });

  it('a CC slower than the timeout → ServiceUnavailable, maybe delivered', async () => {
    await expect(clustersAt(url, 100).call('cluster01', 'ccDescribeResources', { vmTypes: [...DEFAULT_VM_TYPES] }))
      .rejects.toMatchObject({ code: 'ServiceUnavailable', fields: { delivered: 'maybe' } });
  });
});
