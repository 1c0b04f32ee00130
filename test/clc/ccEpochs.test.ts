/**
 * The CLC's side of the CC epochs (issue 21, clc/clusters/ccClusters.ts): every change carries the
 * leader's epoch, reads carry none, a replica that does not lead sends no change, the single CLC sends
 * no epoch, and the CC's StaleLeaderEpoch reaches the admin as NotLeader naming the leader.
 */
import { describe, expect, it } from 'vitest';
import { createCcClusters } from '../../clc/clusters/ccClusters.js';
import type { Leadership } from '../../clc/core/leadership.js';
import { DEFAULT_VM_TYPES } from '../../shared/model/vmTypes.js';
import { WireErrors } from '../../shared/wire/errors.js';
import type { WireTransport } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';

const PARTITIONS = [{ name: 'cluster01', endpoint: 'http://127.0.94.254:8774' }];
const VM_TYPES = DEFAULT_VM_TYPES.map((t) => ({ ...t }));
const NODE = { host: '127.0.94.1', partition: 'cluster01', nodeState: 'disabled', reachable: true, healthy: true, lastSeen: 1, capacity: { cores: 1, memoryMiB: 1, diskGiB: 1 }, used: { cores: 0, memoryMiB: 0, diskGiB: 0 }, instances: [] };

const answerOf = (op: string): WireObject => (op === 'ccModifyNode' ? { previousState: 'enabled', node: NODE, matrix: [] } : { partition: 'cluster01', nodes: [] });

function recording(answer: (op: string) => WireObject | Error = answerOf) {
  const sent: { op: string; body: WireObject }[] = [];
  const transport: WireTransport = {
    call: async (_endpoint, op, body) => {
      sent.push({ op, body });
      const a = answer(op);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return { transport, sent };
}

function replica(leading: boolean, epoch: string, leader = 'http://127.0.94.254:19801'): Leadership {
  return { self: 'http://127.0.94.254:19800', leading: () => leading, leaderUrl: () => leader, epoch: () => (leading ? epoch : undefined) };
}

const modify = { host: '127.0.94.1', stateName: 'disabled' as const, vmTypes: VM_TYPES };

describe('createCcClusters with a leadership', () => {
  it('a change carries the leader\'s epoch; a read carries none', async () => {
    const { transport, sent } = recording();
    const clusters = createCcClusters({ partitions: PARTITIONS, transport, timeoutMs: 100, leadership: replica(true, '4242') });
    await clusters.call('cluster01', 'ccModifyNode', modify);
    await clusters.call('cluster01', 'ccDescribeNodes', {});
    expect(sent.map((s) => [s.op, s.body.clcEpoch])).toEqual([['ccModifyNode', '4242'], ['ccDescribeNodes', undefined]]);
  });

  it('a replica that does not lead sends no change (NotLeader, not delivered) but still reads', async () => {
    const { transport, sent } = recording();
    const clusters = createCcClusters({ partitions: PARTITIONS, transport, timeoutMs: 100, leadership: replica(false, '1') });
    await expect(clusters.call('cluster01', 'ccModifyNode', modify)).rejects.toMatchObject({ code: 'NotLeader', fields: { delivered: 'no', leaderUrl: 'http://127.0.94.254:19801' } });
    await expect(clusters.call('cluster01', 'ccSetFencedHosts', { hosts: [] })).rejects.toMatchObject({ code: 'NotLeader' });
    await clusters.call('cluster01', 'ccDescribeNodes', {});
    expect(sent.map((s) => s.op)).toEqual(['ccDescribeNodes']);
  });

  it('the CC\'s StaleLeaderEpoch is NotLeader naming the leader, answered (nothing was done)', async () => {
    const { transport } = recording(() => WireErrors.make('RemoteFault', {
      peer: 'cc', operation: 'ccModifyNode', remoteCode: 'StaleLeaderEpoch', remoteStatus: 409, remoteMessage: 'ccModifyNode carries CLC epoch 7, older than epoch 9',
    }));
    const clusters = createCcClusters({ partitions: PARTITIONS, transport, timeoutMs: 100, leadership: replica(true, '7') });
    const e = await clusters.call('cluster01', 'ccModifyNode', modify).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'NotLeader', status: 503, fields: { delivered: 'yes', remoteCode: 'StaleLeaderEpoch', leaderUrl: 'http://127.0.94.254:19801', partition: 'cluster01' } });
    expect((e as Error).message).toContain('the leader is http://127.0.94.254:19801');
    expect((e as Error).message).toContain('has seen a newer leader');
  });
});

describe('createCcClusters of the single CLC (no leadership given)', () => {
  it('sends no epoch', async () => {
    const { transport, sent } = recording();
    const clusters = createCcClusters({ partitions: PARTITIONS, transport, timeoutMs: 100 });
    await clusters.call('cluster01', 'ccModifyNode', modify);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).not.toHaveProperty('clcEpoch');
  });
});
