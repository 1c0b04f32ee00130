import { describe, expect, it } from 'vitest';
import { WireCcNotifier } from '../../nc/ccNotifier.js';
import { silentLogger } from '../../shared/log.js';
import { WireErrors } from '../../shared/wire/errors.js';
import type { CallOptions, WireTransport } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';
import { settle } from './fixtures.js';

/** A hand-written transport: records calls; each answers when the test says so. */
class FakeTransport implements WireTransport {
  readonly calls: { endpoint: string; operation: string; body: WireObject; opts?: CallOptions }[] = [];
  private readonly pending: { resolve: (v: WireObject) => void; reject: (e: unknown) => void }[] = [];

  call(endpoint: string, operation: string, body: WireObject, opts?: CallOptions): Promise<WireObject> {
    this.calls.push({ endpoint, operation, body, opts });
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  answerAll(): void {
    for (const p of this.pending.splice(0)) p.resolve({});
  }

  failAll(): void {
    for (const p of this.pending.splice(0)) p.reject(WireErrors.make('PeerUnreachable', { peer: 'cc', detail: 'ECONNREFUSED' }));
  }
}

const CC = 'http://127.0.0.1:8774';

describe('CC notifier', () => {
  it('sends ccNodeEvent with a short timeout, without waiting for the answer', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger() });
    n.notify({ host: '127.0.10.1', kind: 'migration', migrationId: 'mig-0000000a', instanceId: 'i-0000000a' });
    await settle();
    expect(t.calls).toEqual([{
      endpoint: CC, operation: 'ccNodeEvent', opts: { timeoutMs: 1000 },
      body: { host: '127.0.10.1', kind: 'migration', migrationId: 'mig-0000000a', instanceId: 'i-0000000a' },
    }]);
    t.answerAll();
  });

  it('swallows failures (the CC polls anyway) and drops hints beyond the in-flight bound', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger(), maxInFlight: 2 });
    for (let i = 0; i < 4; i++) n.notify({ host: '127.0.10.1', kind: 'node' });
    await settle();
    expect(t.calls).toHaveLength(2);
    t.failAll();
    await settle();
    n.notify({ host: '127.0.10.1', kind: 'instance', instanceId: 'i-0000000a' });
    await settle();
    expect(t.calls).toHaveLength(3);
    t.answerAll();
  });

  it('never sends a hint that breaks the contract', async () => {
    const t = new FakeTransport();
    const n = new WireCcNotifier({ transport: t, ccUrl: CC, logger: silentLogger() });
    n.notify({ host: 'not-an-address', kind: 'node' });
    await settle();
    expect(t.calls).toEqual([]);
  });
});
