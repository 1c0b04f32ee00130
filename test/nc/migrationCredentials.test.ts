/**
 * Per-migration credentials on the NC (over fake hypervisors): a mutual-TLS NC refuses prepare and
 * commit without one and changes nothing; it hands each credential to its hypervisor and nowhere
 * else (not the store, not a describe answer); after a restart it has none, so it re-joins a live
 * migration but never re-prepares an incoming one without its credential.
 */
import { describe, expect, it } from 'vitest';
import type { MigrationCredential, NcMigrateRequest } from '../../shared/protocol/migrationProtocol.js';
import { settle } from './fixtures.js';
import {
  A, commit, hv, item, itemOf, pair, plan, prepareDest, prepareSource, restart, type Pair,
} from './migrationFixtures.js';

const cred = (who: string): MigrationCredential => ({
  caPem: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n',
  certPem: `-----BEGIN CERTIFICATE-----\n${who}\n-----END CERTIFICATE-----\n`,
  keyPem: `-----BEGIN PRIVATE KEY-----\nSECRET-${who}\n-----END PRIVATE KEY-----\n`,
});
const withCred = (r: NcMigrateRequest, c: MigrationCredential): NcMigrateRequest => ({ ...r, credential: c }) as NcMigrateRequest;

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(() => undefined, (e: { code?: string }) => e.code);
}

function secretsIn(p: Pair): boolean {
  const text = JSON.stringify([p.src.store.read(), p.dst.store.read()]);
  return text.includes('SECRET-') || text.includes('PRIVATE KEY');
}

/** Both NCs require credentials; the item of A is migrating, each side given its own. */
async function migratingWithCredentials(): Promise<Pair> {
  const p = await pair({ requireCredentials: true });
  await p.src.controller.migrate(prepareSource(plan([item(A)])));
  await p.dst.controller.migrate(withCred(prepareDest(A), cred('dst')));
  await p.src.controller.migrate(withCred(commit(A), cred('src')));
  await settle();
  return p;
}

describe('a mutual-TLS NC and per-migration credentials', () => {
  it('refuses a destination prepare without a credential and keeps nothing', async () => {
    const p = await pair({ requireCredentials: true });
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    expect(await codeOf(p.dst.controller.migrate(prepareDest(A)))).toBe('MigrationCredentialMissing');
    expect(p.dst.store.read().incoming).toEqual({});
    expect(p.dst.driver.calls.filter((c) => c.startsWith('prepareIncoming'))).toEqual([]);
  });

  it('refuses a commit without a credential: the item stays queued and nothing is sent', async () => {
    const p = await pair({ requireCredentials: true });
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    await p.dst.controller.migrate(withCred(prepareDest(A), cred('dst')));
    expect(await codeOf(p.src.controller.migrate(commit(A)))).toBe('MigrationCredentialMissing');
    expect(itemOf(p.src)?.state).toBe('queued');
    expect(p.src.driver.calls.filter((c) => c.startsWith('migrateOut'))).toEqual([]);
  });

  it('hands each side its own credential, and none reaches the store or a describe answer', async () => {
    const p = await migratingWithCredentials();
    expect(p.dst.driver.credentials).toEqual([{ method: 'prepareIncoming', id: A, credential: cred('dst') }]);
    expect(p.src.driver.credentials).toEqual([{ method: 'migrateOut', id: A, credential: cred('src') }]);
    expect(secretsIn(p)).toBe(false);
    const described = JSON.stringify([await p.src.controller.describe(), await p.dst.controller.describe()]);
    expect(described).not.toContain('SECRET-');
    p.src.driver.complete(hv(A));
    await settle();
    expect(itemOf(p.src)?.state).toBe('completed');
    expect(secretsIn(p)).toBe(false);
  });

  it('after a source restart it re-joins the live migration without a credential (the hypervisor holds the stream)', async () => {
    const p = await migratingWithCredentials();
    await restart(p, 'src');
    const joins = p.src.driver.credentials.filter((c) => c.method === 'migrateOut');
    expect(joins).toHaveLength(2);
    expect(joins[1]?.credential).toBeUndefined();
    p.src.driver.complete(hv(A));
    await settle();
    expect(itemOf(p.src)?.state).toBe('completed');
  });

  it('after a destination restart it does not prepare an incoming domain again without its credential', async () => {
    const p = await pair({ requireCredentials: true });
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    p.dst.driver.failNext('prepareIncoming'); // no answer: the record stays preparing for recovery
    expect(await codeOf(p.dst.controller.migrate(withCred(prepareDest(A), cred('dst'))))).toBe('HypervisorUnavailable');
    expect(p.dst.store.read().incoming[A]?.state).toBe('preparing');
    await restart(p, 'dst');
    const prepares = p.dst.driver.credentials.filter((c) => c.method === 'prepareIncoming');
    expect(prepares.every((c) => c.credential !== undefined)).toBe(true);
    // The CC's repeat brings a fresh credential, and the record becomes ready.
    const again = await p.dst.controller.migrate(withCred(prepareDest(A), cred('dst2')));
    expect(again.incoming?.state).toBe('ready');
    expect(p.dst.driver.credentials.at(-1)).toEqual({ method: 'prepareIncoming', id: A, credential: cred('dst2') });
  });

  it('after a destination restart a record still preparing is rolled back, so the CC (finding none) prepares again', async () => {
    // Found by the real-process chaos test: the CC waits on a preparing record, so a kept one stalled
    // the item for prepareMs and rolled it back.
    const p = await pair({ requireCredentials: true });
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    p.dst.driver.failNext('prepareIncoming');
    await codeOf(p.dst.controller.migrate(withCred(prepareDest(A), cred('dst'))));
    expect(p.dst.store.read().incoming[A]?.state).toBe('preparing');
    p.dstEvents.events.length = 0;
    await restart(p, 'dst');
    await settle();
    expect(p.dst.store.read().incoming).toEqual({});
    expect(p.dst.driver.calls.filter((c) => c.startsWith('abortIncoming'))).not.toEqual([]);
    expect(p.dstEvents.events.some((e) => e.kind === 'migration' && e.instanceId === A)).toBe(true);
    expect((await p.dst.controller.migrate(withCred(prepareDest(A), cred('dst2')))).incoming?.state).toBe('ready');
  });

  it('a plaintext NC (no mutual TLS) migrates without credentials', async () => {
    const p = await pair();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    await p.dst.controller.migrate(prepareDest(A));
    await p.src.controller.migrate(commit(A));
    await settle();
    expect(p.src.driver.credentials).toEqual([{ method: 'migrateOut', id: A, credential: undefined }]);
  });
});
