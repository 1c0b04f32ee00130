/** The simulated NC↔NC migration channel: partitions break streams, hung links stall them. */
import { describe, expect, it } from 'vitest';
import type { FerryError } from '../../shared/errors/registry.js';
import type { IncomingSession } from '../../nc/hypervisor/sim/migrationChannel.js';
import { X509Certificate } from 'node:crypto';
import { MigrationNet } from '../../sim/migrationNet.js';
import { ManualClock } from '../../shared/clock.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';
import type { StreamPeer } from '../../nc/hypervisor/sim/migrationChannel.js';
import { credentialPair, makeMigrationCa } from '../helpers/migrationPki.js';

const SPEC = { id: 'i-0000000a', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 }, imageId: 'emi-1' };
const HELLO = { migrationId: 'mig-00000001-i-0000000a', spec: SPEC, sourceHost: 'a' };

function fakeSession(log: string[]): IncomingSession {
  const dropped: ((e: FerryError) => void)[] = [];
  return {
    id: SPEC.id, migrationId: HELLO.migrationId,
    hello: () => undefined,
    round: (r) => { log.push(`round ${r.iteration}`); },
    complete: async () => { log.push('complete'); return { receivedBytes: 1 }; },
    fail: (reason) => { log.push(`fail: ${reason}`); },
    onDropped: (l) => { dropped.push(l); },
  };
}

function setup(): { net: MigrationNet; log: string[] } {
  const log: string[] = [];
  const net = new MigrationNet(() => undefined);
  net.attach('b', { acceptIncoming: async () => fakeSession(log) });
  return { net, log };
}

async function state(p: Promise<unknown>): Promise<string> {
  let out = 'pending';
  p.then(() => { out = 'ok'; }, (e: { code?: string }) => { out = e.code ?? 'error'; });
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return out;
}

describe('MigrationNet', () => {
  it('carries a stream from source to destination', async () => {
    const { net, log } = setup();
    const ch = await net.dialer('a').open('http://b:16509', HELLO);
    await ch.sendRound({ iteration: 1, bytes: 10 });
    await ch.finish({ diskCounter: 0 });
    expect(log).toEqual(['round 1', 'complete']);
  });

  it('a partition breaks an open stream at once and refuses new ones', async () => {
    const { net, log } = setup();
    const ch = await net.dialer('a').open('http://b:16509', HELLO);
    net.partition('a', 'b');
    expect(log[0]).toMatch(/^fail: migration link a-b partitioned/);
    expect(await state(ch.sendRound({ iteration: 1, bytes: 10 }))).toBe('MigrationFailed');
    expect(await state(net.dialer('a').open('http://b:16509', HELLO))).toBe('MigrationFailed');
  });

  it('a hung link stalls sends until it heals; an abort fails them', async () => {
    const { net, log } = setup();
    const ch = await net.dialer('a').open('http://b:16509', HELLO);
    net.hang('a', 'b');
    const send = ch.sendRound({ iteration: 1, bytes: 10 });
    expect(await state(send)).toBe('pending');
    net.heal();
    expect(await state(send)).toBe('ok');
    net.hang('b', 'a');
    const stuck = ch.sendRound({ iteration: 2, bytes: 10 });
    ch.abort('source gave up');
    expect(await state(stuck)).toBe('MigrationAborted');
    expect(log).toEqual(['round 1', 'fail: source gave up']);
  });

  it('the death of either host breaks its streams', async () => {
    const { net, log } = setup();
    const ch = await net.dialer('a').open('http://b:16509', HELLO);
    net.detach('a');
    expect(log).toEqual(['fail: host a is down']);
    expect(await state(ch.sendRound({ iteration: 1, bytes: 10 }))).toBe('MigrationFailed');
  });

  it('a switch-over fault loses the final state (destination fails the stream) or the answer (destination completed)', async () => {
    for (const [phase, expected] of [['final-lost', 'fail: the final state was lost on the way'], ['reply-lost', 'complete']] as const) {
      const { net, log } = setup();
      net.breakSwitchover('b', phase);
      const ch = await net.dialer('a').open('http://b:16509', HELLO);
      expect(await state(ch.finish({ diskCounter: 0 }))).toBe('MigrationFailed');
      expect(log).toEqual([expected]);
      // One-shot: the next switch-over goes through.
      const again = await net.dialer('a').open('http://b:16509', HELLO);
      expect(await state(again.finish({ diskCounter: 0 }))).toBe('ok');
    }
  });

  it('settle asks the destination over the same link: refused while cut or hung, answered once healed', async () => {
    const net = new MigrationNet(() => undefined);
    net.attach('b', { acceptIncoming: async () => fakeSession([]), settleIncoming: async () => 'completed' });
    const settle = net.dialer('a').settle;
    expect(settle).toBeDefined();
    net.partition('a', 'b');
    expect(await state(settle?.('http://b:16509', HELLO) ?? Promise.resolve())).toBe('MigrationFailed');
    net.heal();
    net.hang('a', 'b');
    expect(await state(settle?.('http://b:16509', HELLO) ?? Promise.resolve())).toBe('MigrationFailed');
    net.heal();
    await expect(settle?.('http://b:16509', HELLO)).resolves.toBe('completed');
    net.detach('b');
    expect(await state(settle?.('http://b:16509', HELLO) ?? Promise.resolve())).toBe('MigrationFailed');
  });

  describe('per-migration credentials, checked as the TLS stream checks them', () => {
    const ca = makeMigrationCa('net');
    const ITEM = { migrationId: 'mig-00000001', instanceId: SPEC.id, source: 'a', destination: 'b' };
    // Hosts are addresses in a real cloud; the certificates name these two.
    const A = '127.0.50.1';
    const B = '127.0.50.2';
    const item = { ...ITEM, source: A, destination: B };
    const hello = { ...HELLO, sourceHost: A };
    const clock = new ManualClock(Date.now());

    function tlsSetup(served: MigrationCredential | undefined): { net: MigrationNet; peers: StreamPeer[] } {
      const peers: StreamPeer[] = [];
      const net = new MigrationNet(() => undefined);
      net.attach(B, {
        acceptIncoming: async (_id, _mig, peer) => { if (peer) peers.push(peer); return fakeSession([]); },
        incomingCredential: () => served,
      });
      return { net, peers };
    }

    it('an https:// destination needs the source\'s credential; a credential never goes to http://', async () => {
      const pair = credentialPair(ca, item);
      const { net } = tlsSetup(pair.destination);
      expect(await state(net.dialer(A, clock).open(`https://${B}:16514`, hello))).toBe('MigrationCredentialInvalid');
      expect(await state(net.dialer(A, clock).open(`http://${B}:16509`, hello, pair.source))).toBe('MigrationCredentialInvalid');
    });

    it('the right pair opens the stream, and the destination is handed the source\'s certificate to check', async () => {
      const pair = credentialPair(ca, item);
      const { net, peers } = tlsSetup(pair.destination);
      await net.dialer(A, clock).open(`https://${B}:16514`, hello, pair.source);
      expect(peers).toHaveLength(1);
      expect(peers[0]?.kind === 'tls' ? peers[0].cert?.serialNumber : undefined).toBe(new X509Certificate(pair.source.certPem).serialNumber);
    });

    it('no TLS migration prepared there: no handshake; a destination serving a superseded generation is refused by the source', async () => {
      expect(await state(tlsSetup(undefined).net.dialer(A, clock).open(`https://${B}:16514`, hello, credentialPair(ca, item).source))).toBe('MigrationCredentialRejected');
      const { net, peers } = tlsSetup(credentialPair(ca, item).destination);
      const refused = net.dialer(A, clock).open(`https://${B}:16514`, hello, credentialPair(ca, { ...item, generation: 1 }).source);
      await expect(refused).rejects.toMatchObject({ code: 'MigrationCredentialRejected', fields: expect.objectContaining({ reason: 'superseded' }) });
      expect(peers).toEqual([]);
    });
  });
});
