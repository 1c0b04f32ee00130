/**
 * Issue 16 item 8 on the NC (over fake hypervisors that, like simhv, start no migration without its
 * credential): a source NC killed right after it persisted `migrating`, before its hypervisor heard
 * of the migration, comes back without the credential. Its join is refused for want of one, so the
 * item awaits a re-issued credential of the next generation instead of rolling back; the destination
 * takes its new credential of that generation, then the source's commit with it starts the migration.
 */
import { describe, expect, it } from 'vitest';
import { HypervisorErrors } from '../../nc/hypervisor/errors.js';
import type { MigrationCredential, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import { credentialPair, makeMigrationCa } from '../helpers/migrationPki.js';
import { settle } from './fixtures.js';
import {
  A, commit, crash, DST, hv, item, itemOf, MIG, pair, plan, prepareDest, prepareSource, restart, rollback, SRC, TIMEOUTS, whereIs, type Pair,
} from './migrationFixtures.js';

const ca = makeMigrationCa('rejoin');
const ITEM = { migrationId: MIG, instanceId: A, source: SRC, destination: DST };
const gen = (generation: number) => credentialPair(ca, { ...ITEM, generation });
const first = gen(0);
const withCred = (r: NcMigrateRequest, c: MigrationCredential): NcMigrateRequest => ({ ...r, credential: c }) as NcMigrateRequest;
const migrateOuts = (p: Pair) => p.src.driver.credentials.filter((c) => c.method === 'migrateOut');

/** Both sides prepared with generation 0; the source persists `migrating` and dies before its hypervisor gets the migration. */
async function killedAfterMigratingPersisted(): Promise<Pair> {
  const p = await pair({ requireCredentials: true });
  p.src.driver.credentialsRequired = true;
  await p.src.controller.migrate(prepareSource(plan([item(A)])));
  await p.dst.controller.migrate(withCred(prepareDest(A), first.destination));
  p.src.driver.failNext('migrateOut'); // the call never reaches the hypervisor: the process died first
  await p.src.controller.migrate(withCred(commit(A), first.source));
  await settle();
  expect(itemOf(p.src)?.state).toBe('migrating');
  expect(p.src.driver.outgoing.size).toBe(0);
  await crash(p, 'src');
  return p;
}

function secretsIn(p: Pair): boolean {
  const text = JSON.stringify([p.src.store.read(), p.dst.store.read()]);
  return text.includes('PRIVATE KEY');
}

describe('a source NC that lost its credential before its hypervisor started the migration', () => {
  it('awaits a re-issued credential instead of rolling back, and completes with the next generation', async () => {
    const p = await killedAfterMigratingPersisted();
    p.srcEvents.events.length = 0;
    await restart(p, 'src');
    // The join without a credential was refused, before anything changed: the VM runs here, nothing migrates.
    expect(migrateOuts(p).at(-1)?.credential).toBeUndefined();
    expect(itemOf(p.src)).toMatchObject({ state: 'migrating', awaitingCredential: true, credentialGeneration: 1 });
    expect(p.src.store.read().instances[A]?.migrationState).toBe('migrating');
    expect(p.src.driver.domains.get(A)?.state).toBe('running');
    expect(p.srcEvents.events).toContainEqual({ host: SRC, kind: 'migration', migrationId: MIG, instanceId: A });
    const shown = (await p.src.controller.describe()).plans?.find((m) => m.migrationId === MIG)?.items[0];
    expect(shown).toMatchObject({ state: 'migrating', awaitingCredential: true, credentialGeneration: 1 });

    // Polls and ticks do not join again or ask for yet another generation.
    for (let i = 0; i < 3; i++) {
      p.clock.advance(1_000);
      await settle();
    }
    expect(itemOf(p.src)).toMatchObject({ awaitingCredential: true, credentialGeneration: 1 });

    // The CC: the destination first. Its hypervisor gets the generation-1 credential; its record says so.
    const second = gen(1);
    const answer = await p.dst.controller.migrate(withCred(prepareDest(A), second.destination));
    expect(answer.incoming).toMatchObject({ state: 'ready', credentialGeneration: 1 });
    expect(p.dst.driver.credentials.at(-1)).toEqual({ method: 'prepareIncoming', id: A, credential: second.destination });
    // A late repeat of generation 0 changes nothing there.
    await p.dst.controller.migrate(withCred(prepareDest(A), first.destination));
    expect(p.dst.driver.credentials.at(-1)?.credential).toBe(second.destination);
    expect(p.dst.store.read().incoming[A]?.credentialGeneration).toBe(1);

    // A late commit of the superseded generation is answered and dropped; generation 1 starts the migration.
    const before = migrateOuts(p).length;
    await p.src.controller.migrate(withCred(commit(A), first.source));
    expect(migrateOuts(p)).toHaveLength(before);
    await p.src.controller.migrate(withCred(commit(A), second.source));
    await settle();
    expect(migrateOuts(p).at(-1)?.credential).toBe(second.source);
    expect(itemOf(p.src)?.awaitingCredential).toBeUndefined();
    p.src.driver.complete(hv(A));
    await settle();
    expect(itemOf(p.src)?.state).toBe('completed');
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
    expect(secretsIn(p)).toBe(false);
  });

  it('a restart while it awaits keeps the generation it asked for', async () => {
    const p = await killedAfterMigratingPersisted();
    await restart(p, 'src');
    const joins = migrateOuts(p).length;
    await restart(p, 'src');
    expect(migrateOuts(p)).toHaveLength(joins);
    expect(itemOf(p.src)).toMatchObject({ state: 'migrating', awaitingCredential: true, credentialGeneration: 1 });
  });

  it('killed again after taking the re-issued credential but before its hypervisor got it: asks for the next generation', async () => {
    const p = await killedAfterMigratingPersisted();
    await restart(p, 'src');
    const second = gen(1);
    await p.dst.controller.migrate(withCred(prepareDest(A), second.destination));
    p.src.driver.failNext('migrateOut');
    await p.src.controller.migrate(withCred(commit(A), second.source));
    await settle();
    await restart(p, 'src');
    expect(itemOf(p.src)).toMatchObject({ state: 'migrating', awaitingCredential: true, credentialGeneration: 2 });
    // Generation 1 is superseded: a commit with it starts nothing.
    const before = migrateOuts(p).length;
    await p.src.controller.migrate(withCred(commit(A), second.source));
    expect(migrateOuts(p)).toHaveLength(before);
  });

  it('a rollback while it awaits ends the item at once: the VM never left', async () => {
    const p = await killedAfterMigratingPersisted();
    await restart(p, 'src');
    await p.src.controller.migrate(rollback('source', { instanceId: A, reason: 'CC backstop' }));
    await settle();
    expect(itemOf(p.src)).toMatchObject({ state: 'rolled-back', error: 'CC backstop' });
    expect(itemOf(p.src)?.awaitingCredential).toBeUndefined();
    expect(p.src.store.read().instances[A]?.migrationState).toBe('none');
    expect(p.src.driver.domains.get(A)?.state).toBe('running');
  });

  it('it waits no longer than the migrating allowance from its commit, then rolls back by itself', async () => {
    const p = await killedAfterMigratingPersisted();
    await restart(p, 'src');
    const allowance = TIMEOUTS.migratingBaseMs + TIMEOUTS.migratingPerGiBMs / 4; // 256 MiB
    for (let t = 0; t < allowance + 2_000; t += 1_000) {
      p.clock.advance(1_000);
      await settle();
    }
    expect(itemOf(p.src)).toMatchObject({ state: 'rolled-back' });
    expect(itemOf(p.src)?.error).toMatch(/timed out/);
    expect(whereIs(p).running).toEqual([SRC]);
  });

  it('a destination whose hypervisor refuses the re-join\'s credential keeps its acknowledged record (the VM may have arrived there)', async () => {
    const p = await killedAfterMigratingPersisted();
    await restart(p, 'src');
    p.dst.driver.failNext('prepareIncoming', HypervisorErrors.make('DomainStateConflict', { id: A, host: DST, state: 'running', operation: 'prepare an incoming migration' }));
    await expect(p.dst.controller.migrate(withCred(prepareDest(A), gen(1).destination))).rejects.toMatchObject({ code: 'HypervisorRefused' });
    expect(p.dst.store.read().incoming[A]).toMatchObject({ state: 'ready' });
    expect(p.dst.store.read().incoming[A]?.credentialGeneration).toBeUndefined();
  });

  it('any other refusal of the join still rolls back (the hypervisor is the judge), and a plaintext NC never awaits', async () => {
    const p = await killedAfterMigratingPersisted();
    p.src.driver.failNext('migrateOut', HypervisorErrors.make('MigrationCredentialRejected', { migrationId: hv(A), id: A, reason: 'handshake', detail: 'x' }));
    await restart(p, 'src');
    expect(itemOf(p.src)?.state).toBe('rolled-back');

    const plain = await pair();
    plain.src.driver.credentialsRequired = true; // a misconfigured https destination in a plaintext cloud: nothing to re-issue
    await plain.src.controller.migrate(prepareSource(plan([item(A)])));
    await plain.dst.controller.migrate(prepareDest(A));
    plain.src.driver.failNext('migrateOut');
    await plain.src.controller.migrate(commit(A));
    await settle();
    await restart(plain, 'src');
    expect(itemOf(plain.src)?.state).toBe('rolled-back');
  });
});
