/**
 * A switch-over whose stream breaks after the source paused the guest (migrationChannel.ts
 * `settle`, switchoverSettle.ts): the final state lost on the way → the destination abandons it
 * and the source resumes; the answer lost after the destination took it → the source forgets the
 * guest; the destination unreachable → the guest stays paused on the source until it can ask.
 * Never two running copies, never none. Two SimHosts in memory on a ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.js';
import type { DomainSpec } from '../../../nc/hypervisor/driver.js';
import { HypervisorErrors } from '../../../nc/hypervisor/errors.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import {
  InProcessNetwork, type MigrationChannel, type MigrationDialer, type OutgoingHello, type SwitchoverOutcome,
} from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost } from '../../../nc/hypervisor/sim/simHost.js';
import { SETTLE_RETRY_MS } from '../../../nc/hypervisor/sim/switchoverSettle.js';
import { codeOf } from '../../helpers/codeOf.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));
const SPEC: DomainSpec = { id: 'i-00000001', imageId: 'emi-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 10 } };
const DEST = 'sim://127.0.9.22';

type Loss = 'none' | 'final-lost' | 'reply-lost';

/** The in-process network with a fault at the final hand-over and a switch for the settle question. */
class LossyDialer implements MigrationDialer {
  loss: Loss = 'none';
  reachable = true;
  asked = 0;
  constructor(private readonly net: InProcessNetwork, private readonly destination: () => SimHost, private readonly withSettle = true) {}

  async open(uri: string, hello: OutgoingHello): Promise<MigrationChannel> {
    const ch = await this.net.open(uri, hello);
    const lost = () => HypervisorErrors.make('MigrationFailed', { migrationId: hello.migrationId, id: hello.spec.id, detail: 'stream closed' });
    return {
      sendRound: (r) => ch.sendRound(r),
      abort: (reason) => ch.abort(reason),
      finish: async (final) => {
        if (this.loss === 'final-lost') {
          ch.abort('link cut');
          throw lost();
        }
        const done = await ch.finish(final);
        if (this.loss === 'reply-lost') throw lost();
        return done;
      },
    };
  }

  get settle(): MigrationDialer['settle'] {
    if (!this.withSettle) return undefined;
    return async (_uri: string, hello: OutgoingHello): Promise<SwitchoverOutcome> => {
      this.asked++;
      if (!this.reachable) throw HypervisorErrors.make('MigrationFailed', { migrationId: hello.migrationId, id: hello.spec.id, detail: 'no route' });
      return this.destination().settleIncoming(hello.spec.id, hello.migrationId);
    };
  }
}

async function pair(withSettle = true) {
  const clock = new ManualClock(1_700_000_000_000);
  const disk = new MemoryDiskIo(clock);
  const net = new InProcessNetwork();
  const dest: { host?: SimHost } = {};
  const dialer = new LossyDialer(net, () => dest.host as SimHost, withSettle);
  const open = async (host: string, d: MigrationDialer) => SimHost.open(
    { host, capacity: { cores: 8, memoryMiB: 4096, diskGiB: 200 }, storageDir: '/shared', migration: MIGRATION_DEFAULTS, writeIntervalMs: 1000, timeScale: 1 },
    { clock, store: await openSimHvMemoryStore(), disk, dialer: d },
  );
  const a = await open('127.0.9.21', dialer);
  const b = await open('127.0.9.22', net);
  dest.host = b;
  net.register(DEST, b);
  await a.create(SPEC);
  await b.prepareIncoming(SPEC, 'm-1');
  return { clock, a, b, dialer };
}

/** Steps the clock until `p` settles or `maxMs` passed; returns whether it settled. */
async function run(clock: ManualClock, p: Promise<unknown>, maxMs = 60_000): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  for (let t = 0; t < maxMs && !done; t += 10) {
    await flush();
    clock.advance(10);
  }
  await flush();
  return done;
}

const running = (h: SimHost): boolean => h.get(SPEC.id)?.state === 'running';

describe('a switch-over broken mid-way', () => {
  it('final state lost: the destination abandons it, the source resumes (one running copy)', async () => {
    const { clock, a, b, dialer } = await pair();
    dialer.loss = 'final-lost';
    const p = a.migrateOut(SPEC.id, { migrationId: 'm-1', destinationUri: DEST });
    expect(await run(clock, p)).toBe(true);
    expect(await codeOf(p)).toBe('MigrationFailed');
    expect(dialer.asked).toBe(1);
    expect([running(a), b.get(SPEC.id)]).toEqual([true, undefined]);
  });

  it('answer lost after the destination took it: the source forgets the guest, the migration succeeds', async () => {
    const { clock, a, b, dialer } = await pair();
    dialer.loss = 'reply-lost';
    const p = a.migrateOut(SPEC.id, { migrationId: 'm-1', destinationUri: DEST });
    expect(await run(clock, p)).toBe(true);
    await expect(p).resolves.toMatchObject({ migrationId: 'm-1', id: SPEC.id });
    expect([a.get(SPEC.id), running(b)]).toEqual([undefined, true]);
    expect(a.migrationStatus(SPEC.id, 'm-1').state).toBe('completed');
  });

  it('destination unreachable: the guest stays paused on the source (abort refused) until it can ask', async () => {
    const { clock, a, b, dialer } = await pair();
    dialer.loss = 'reply-lost';
    dialer.reachable = false;
    const p = a.migrateOut(SPEC.id, { migrationId: 'm-1', destinationUri: DEST });
    expect(await run(clock, p, 20_000)).toBe(false);
    expect(a.get(SPEC.id)?.state).toBe('paused');
    expect(running(b)).toBe(true);
    expect(dialer.asked).toBeGreaterThan(5);
    expect(await codeOf(a.abortMigration(SPEC.id, 'm-1'))).toBe('DomainStateConflict');
    dialer.reachable = true;
    expect(await run(clock, p, 2 * SETTLE_RETRY_MS)).toBe(true);
    await expect(p).resolves.toMatchObject({ migrationId: 'm-1' });
    expect([a.get(SPEC.id), running(b)]).toEqual([undefined, true]);
  });

  it('settling is atomic and idempotent on the destination: abandoned stays abandoned, completed stays completed', async () => {
    const { b } = await pair();
    expect(await b.settleIncoming(SPEC.id, 'm-1')).toBe('abandoned');
    expect(b.get(SPEC.id)).toBeUndefined();
    expect(await codeOf(b.acceptIncoming(SPEC.id, 'm-1'))).toBe('IncomingNotPrepared');
    expect(await b.settleIncoming(SPEC.id, 'm-1')).toBe('abandoned');
    expect(await b.settleIncoming('i-00000009', 'm-9')).toBe('abandoned');
  });

  it('a dialer that cannot settle keeps the old behaviour: the source resumes', async () => {
    const { clock, a, dialer } = await pair(false);
    dialer.loss = 'final-lost';
    const p = a.migrateOut(SPEC.id, { migrationId: 'm-1', destinationUri: DEST });
    expect(await run(clock, p)).toBe(true);
    expect(await codeOf(p)).toBe('MigrationFailed');
    expect(running(a)).toBe(true);
  });
});
