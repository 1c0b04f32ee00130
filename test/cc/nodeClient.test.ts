import { describe, expect, it } from 'vitest';
import { translateNodeError, WireNodeClient } from '../../cc/nodeClient.js';
import { CcErrors } from '../../cc/errors.js';
import type { FerryError } from '../../shared/errors/registry.js';
import { WireErrors } from '../../shared/wire/errors.js';
import type { CallOptions, WireTransport } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';
import { slots } from './fakeNodes.js';

const H = '127.0.11.1';
const remote = (remoteCode: string, remoteMessage = 'm'): FerryError =>
  WireErrors.make('RemoteFault', { peer: `http://${H}:8775`, operation: 'ncRunInstance', remoteCode, remoteMessage, remoteStatus: 409 });

describe('translateNodeError (the NC boundary)', () => {
  it.each<[string, FerryError, string, Record<string, unknown>]>([
    ['NodeDisabled', remote('NodeDisabled'), 'NodeDisabled', { host: H }],
    ['InsufficientCapacity', remote('InsufficientCapacity', 'needs 2 cores'), 'NodeFull', { host: H, detail: 'needs 2 cores' }],
    ['InstanceNotFound', remote('InstanceNotFound'), 'InstanceNotFound', { host: H }],
    ['InstanceExists', remote('InstanceExists'), 'InstanceExists', { host: H }],
    ['HypervisorUnavailable', remote('HypervisorUnavailable', 'libvirtd down'), 'NodeUnhealthy', { detail: 'libvirtd down' }],
    ['another NC code', remote('StateWriteFailed', 'disk full'), 'NodeFault', { remoteCode: 'StateWriteFailed', remoteMessage: 'disk full' }],
    ['connection refused', WireErrors.make('PeerUnreachable', { peer: H, detail: 'ECONNREFUSED' }), 'NodeUnreachable', { maybeDelivered: false }],
    ['connection reset', WireErrors.make('PeerUnreachable', { peer: H, detail: 'ECONNRESET' }), 'NodeUnreachable', { maybeDelivered: true }],
    ['timeout', WireErrors.make('PeerTimeout', { peer: H, operation: 'x', timeoutMs: 5 }), 'NodeUnreachable', { maybeDelivered: true }],
    ['garbled answer', WireErrors.make('PeerProtocolError', { peer: H, operation: 'x', detail: 'not xml' }), 'NodeProtocolError', { detail: 'not xml' }],
  ])('%s', (_name, err, code, fields) => {
    const out = translateNodeError(err, H, 'ncRunInstance') as FerryError;
    expect(out.code).toBe(code);
    expect(CcErrors.has(out.code)).toBe(true);
    expect(out.fields).toMatchObject(fields);
  });

  it('passes our own bugs through untouched', () => {
    const bug = new TypeError('x is undefined');
    expect(translateNodeError(bug, H, 'ncRunInstance')).toBe(bug);
  });
});

class ScriptedTransport implements WireTransport {
  readonly seen: { endpoint: string; operation: string; body: WireObject; opts?: CallOptions }[] = [];
  constructor(private readonly answer: (op: string) => WireObject | Error) {}
  async call(endpoint: string, operation: string, body: WireObject, opts?: CallOptions): Promise<WireObject> {
    this.seen.push({ endpoint, operation, body, ...(opts ? { opts } : {}) });
    const a = this.answer(operation);
    if (a instanceof Error) throw a;
    return a;
  }
}

const NODE: WireObject = { host: H, nodeState: 'enabled', healthy: true, hypervisor: 'sim', capacity: { ...slots(2) }, used: { ...slots(0) }, instances: [] };

describe('WireNodeClient', () => {
  it('calls the NC contract at the node\'s endpoint and validates the answer', async () => {
    const t = new ScriptedTransport(() => NODE);
    const c = new WireNodeClient(t, (h) => `http://${h}:8775`);
    await expect(c.describe(H, { timeoutMs: 250 })).resolves.toEqual(NODE);
    expect(t.seen).toEqual([{ endpoint: `http://${H}:8775`, operation: 'ncDescribeResource', body: {}, opts: { timeoutMs: 250 } }]);
  });

  it('an answer outside the contract is NodeProtocolError; a refusal is translated', async () => {
    const bad = new WireNodeClient(new ScriptedTransport(() => ({ host: H })), (h) => `http://${h}:8775`);
    await expect(bad.describe(H)).rejects.toMatchObject({ code: 'NodeProtocolError', fields: { host: H } });
    const refusing = new WireNodeClient(new ScriptedTransport(() => remote('NodeDisabled')), (h) => `http://${h}:8775`);
    await expect(refusing.modifyNode(H, 'disabled')).rejects.toMatchObject({ code: 'NodeDisabled' });
  });
});
