/**
 * kill -9 at every crash point of the handshake, then a restart over what reached the disk and the
 * hypervisor as it is then. Each row runs the real handshake up to its crash point, restarts the
 * NC(s), lets the world go on (the hypervisor finishes, the CC rolls back), and checks the outcome
 * and the invariant: the instance has exactly one live record, on one node, and runs at most once.
 */
import { describe, expect, it } from 'vitest';
import type { MigrationState } from '../../shared/protocol/common.js';
import type { ItemState } from '../../shared/protocol/migrationProtocol.js';
import { settle, SMALL } from './fixtures.js';
import {
  A, boot, commit, crash, DST, hv, item, itemOf, pair, plan, prepareDest, prepareSource, rollback, SRC, startMigration,
  whereIs, type Pair,
} from './migrationFixtures.js';

interface CrashPoint {
  readonly name: string;
  /** Runs the handshake up to the crash, kills the NC(s) there, and changes the hypervisors as the world did meanwhile. */
  readonly until: (p: Pair) => Promise<void>;
  readonly restart: readonly ('src' | 'dst')[];
  /** After the restart: what happens next (the hypervisor finishes, the CC retries or rolls back). */
  readonly then?: (p: Pair) => Promise<void>;
  readonly item: ItemState;
  readonly incoming: MigrationState | 'gone';
  readonly where: { readonly records: string[]; readonly running: string[] };
  /** Whether the completed item carries the hypervisor's stats (false: the outcome was inferred). */
  readonly stats?: boolean;
}

const prepared = async (p: Pair): Promise<void> => {
  await p.src.controller.migrate(prepareSource(plan([item(A)])));
  await p.dst.controller.migrate(prepareDest(A));
};
const finish = async (p: Pair): Promise<void> => {
  p.src.driver.complete(hv(A));
  await settle();
};
const commitAndFinish = async (p: Pair): Promise<void> => {
  await p.src.controller.migrate(commit(A));
  await settle();
  await finish(p);
};
const ccRollsBackDestination = async (p: Pair): Promise<void> => {
  await p.dst.controller.migrate(rollback('destination'));
};
const calls = (p: Pair, side: 'src' | 'dst', prefix: string) => p[side].driver.calls.filter((c) => c.startsWith(prefix));

const ON_DST = { records: [DST], running: [DST] };
const ON_SRC = { records: [SRC], running: [SRC] };

const points: CrashPoint[] = [
  {
    name: 'source: at commit, before migrating is written',
    until: async (p) => {
      await prepared(p);
      p.srcStore.kill();
      await expect(p.src.controller.migrate(commit(A))).rejects.toMatchObject({ code: 'StateWriteFailed' });
      expect(calls(p, 'src', 'migrateOut')).toEqual([]);
      await crash(p, 'src');
    },
    restart: ['src'],
    then: commitAndFinish,
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: after migrating is written, before the hypervisor heard of it',
    until: async (p) => {
      await prepared(p);
      p.src.driver.failNext('migrateOut');
      await p.src.controller.migrate(commit(A));
      await settle();
      expect(p.src.driver.outgoing.size).toBe(0);
      await crash(p, 'src');
    },
    restart: ['src'],
    then: finish,
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: while the hypervisor migrates',
    until: async (p) => {
      await startMigration(p);
      p.src.driver.progress(hv(A));
      await crash(p, 'src');
    },
    restart: ['src'],
    then: finish,
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: the migration completed while the NC was down',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'src');
      await finish(p);
    },
    restart: ['src'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: the migration failed while the NC was down',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'src');
      p.src.driver.failMigration(hv(A));
    },
    restart: ['src'],
    then: ccRollsBackDestination,
    item: 'rolled-back', incoming: 'gone', where: ON_SRC,
  },
  {
    name: 'source: its hypervisor restarted after completing it (the outcome record is lost)',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'src');
      await finish(p);
      p.src.driver.outgoing.clear();
    },
    restart: ['src'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: false,
  },
  {
    name: 'source: its host power-cycled mid-migration',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'src');
      p.src.driver.powerCycle();
    },
    restart: ['src'],
    then: ccRollsBackDestination,
    item: 'rolled-back', incoming: 'gone', where: { records: [SRC], running: [] },
  },
  {
    name: 'source: after cleaning is written, before the record is removed',
    until: async (p) => {
      await startMigration(p);
      p.srcStore.dieAfterWrite((s) => s.plans['mig-0000000a']?.items[0]?.state === 'cleaning');
      await finish(p);
      expect(itemOf(p.src)?.state).toBe('cleaning');
      expect(p.src.store.read().instances[A]?.migrationState).toBe('cleaning');
      await crash(p, 'src');
    },
    restart: ['src'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: after cleaning is written, with a stale definition left on the host',
    until: async (p) => {
      await startMigration(p);
      p.srcStore.dieAfterWrite((s) => s.plans['mig-0000000a']?.items[0]?.state === 'cleaning');
      await finish(p);
      await crash(p, 'src');
      p.src.driver.addDomain(A, SMALL, 'shutoff');
    },
    restart: ['src'],
    then: async (p) => {
      expect(calls(p, 'src', 'destroy')).toEqual([`destroy ${A}`]);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  ...([['rollback', false, 'rolled-back'], ['cancel', true, 'cancelled']] as const).map(([what, cancel, state]): CrashPoint => ({
    name: `source: after a ${what} wrote its abort, before the hypervisor heard it`,
    until: async (p) => {
      await startMigration(p);
      p.src.driver.failNext('abortMigration');
      await expect(p.src.controller.migrate(rollback('source', { cancel }))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
      expect(itemOf(p.src)?.abort).toEqual({ reason: 'test says so', cancel });
      await crash(p, 'src');
    },
    restart: ['src'],
    then: async (p) => {
      expect(itemOf(p.src)?.error).toBe('test says so');
      await ccRollsBackDestination(p);
    },
    item: state, incoming: 'gone', where: ON_SRC,
  })),
  {
    name: 'source: after an abort was written, but the migration completed anyway',
    until: async (p) => {
      await startMigration(p);
      p.src.driver.failNext('abortMigration');
      await expect(p.src.controller.migrate(rollback('source'))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
      await crash(p, 'src');
      await finish(p);
    },
    restart: ['src'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'source: its hypervisor connection drops mid-migration (the NC stays up and reconnects)',
    until: async (p) => {
      await startMigration(p);
      p.src.driver.down = true;
      p.src.driver.dropConnections();
      await settle();
      expect(p.src.controller.healthy).toBe(false);
      expect(itemOf(p.src)?.state).toBe('migrating');
      p.src.driver.down = false;
      p.clock.advance(500);
      await settle();
      expect(p.src.controller.healthy).toBe(true);
    },
    restart: [],
    then: finish,
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: at prepare, before preparing is written',
    until: async (p) => {
      await p.src.controller.migrate(prepareSource(plan([item(A)])));
      p.dstStore.kill();
      await expect(p.dst.controller.migrate(prepareDest(A))).rejects.toMatchObject({ code: 'StateWriteFailed' });
      expect(calls(p, 'dst', 'prepareIncoming')).toEqual([]);
      await crash(p, 'dst');
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.store.read().incoming).toEqual({});
      await p.dst.controller.migrate(prepareDest(A));
      await commitAndFinish(p);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: after preparing is written, before the hypervisor heard of it',
    until: async (p) => {
      await p.src.controller.migrate(prepareSource(plan([item(A)])));
      p.dst.driver.failNext('prepareIncoming');
      await expect(p.dst.controller.migrate(prepareDest(A))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
      expect(p.dst.store.read().incoming[A]?.state).toBe('preparing');
      await crash(p, 'dst');
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.store.read().incoming[A]?.state).toBe('ready');
      await commitAndFinish(p);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: after the hypervisor prepared, before ready is written',
    until: async (p) => {
      await p.src.controller.migrate(prepareSource(plan([item(A)])));
      p.dstStore.dieAfterWrite((s) => s.incoming[A]?.state === 'preparing');
      await expect(p.dst.controller.migrate(prepareDest(A))).rejects.toMatchObject({ code: 'StateWriteFailed' });
      expect(p.dst.driver.incoming.get(A)).toBe(hv(A));
      await crash(p, 'dst');
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.store.read().incoming[A]?.state).toBe('ready');
      await commitAndFinish(p);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: while the stream arrives',
    until: async (p) => {
      await startMigration(p);
      p.src.driver.progress(hv(A));
      await crash(p, 'dst');
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.store.read().incoming[A]?.state).toBe('ready');
      await finish(p);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: the VM arrived while the NC was down',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'dst');
      await finish(p);
    },
    restart: ['dst'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: its hypervisor restarted and lost the reservation before commit',
    until: async (p) => {
      await prepared(p);
      await crash(p, 'dst');
      p.dst.driver.powerCycle();
      expect(p.dst.driver.domains.has(A)).toBe(false);
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.driver.domains.get(A)?.state).toBe('paused');
      await commitAndFinish(p);
    },
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: during a rollback, before the hypervisor heard it',
    until: async (p) => {
      await prepared(p);
      p.dst.driver.failNext('abortIncoming');
      await expect(p.dst.controller.migrate(rollback('destination'))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
      expect(p.dst.store.read().incoming[A]?.rollingBack).toBe(true);
      await crash(p, 'dst');
    },
    restart: ['dst'],
    then: async (p) => {
      expect(p.dst.driver.domains.has(A)).toBe(false);
      await p.src.controller.migrate(rollback('source'));
    },
    item: 'rolled-back', incoming: 'gone', where: ON_SRC,
  },
  {
    name: 'destination: during a rollback that came after the VM had arrived',
    until: async (p) => {
      await startMigration(p);
      p.dst.driver.muted = true;
      await finish(p);
      p.dst.driver.failNext('abortIncoming');
      await expect(p.dst.controller.migrate(rollback('destination'))).rejects.toMatchObject({ code: 'HypervisorUnavailable' });
      await crash(p, 'dst');
      p.dst.driver.muted = false;
    },
    restart: ['dst'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
  {
    name: 'destination: the VM arrived, then its host power-cycled before the NC saw it',
    until: async (p) => {
      await startMigration(p);
      p.dst.driver.muted = true;
      await finish(p);
      await crash(p, 'dst');
      p.dst.driver.powerCycle();
      p.dst.driver.muted = false;
    },
    restart: ['dst'],
    item: 'completed', incoming: 'gone', where: { records: [DST], running: [] }, stats: true,
  },
  {
    name: 'both: both NCs die mid-migration and it completes meanwhile',
    until: async (p) => {
      await startMigration(p);
      await crash(p, 'src');
      await crash(p, 'dst');
      await finish(p);
    },
    restart: ['src', 'dst'],
    item: 'completed', incoming: 'gone', where: ON_DST, stats: true,
  },
];

describe('restart at every crash point of a migration', () => {
  it.each(points.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const p = await pair();
    await c.until(p);
    for (const side of c.restart) await boot(p, side);
    await c.then?.(p);
    // The CC's polls: level-based recovery runs on describe too.
    await p.src.controller.describe();
    await p.dst.controller.describe();
    await settle();

    const it0 = itemOf(p.src);
    expect(it0?.state).toBe(c.item);
    expect(p.dst.store.read().incoming[A]?.state ?? 'gone').toBe(c.incoming);
    const where = whereIs(p);
    expect(where).toEqual(c.where);
    // Never lost, never twice.
    expect(where.records).toHaveLength(1);
    expect(where.running.length).toBeLessThanOrEqual(1);
    if (c.item === 'completed') expect(it0?.stats !== undefined).toBe(c.stats ?? false);
    const live = Object.values(p.src.store.read().instances).filter((r) => r.migrationState !== 'none');
    expect(live).toEqual([]);
    await p.src.controller.stop();
    await p.dst.controller.stop();
  });
});
