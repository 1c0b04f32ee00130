/**
 * The CC's side of per-migration credentials: every destination prepare and every commit carries a
 * fresh credential for that side of that item (with the item's lifetime), nothing else carries one,
 * and no step goes out without one when issuing fails. Also the real issuer over a migration CA.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caCredentialIssuer, loadMigrationCa, type CredentialIssuer, type CredentialRequest } from '../../../cc/migration/credentialIssuer.js';
import { credentialLifetimeMs } from '../../../cc/migration/marks.js';
import { ManualClock } from '../../../shared/clock.js';
import { checkMigrationPeer, migrationIdentityOf } from '../../../shared/pki/migrationPeer.js';
import type { MigrationCredential, NcMigrateRequest } from '../../../shared/protocol/migrationProtocol.js';
import { makeMigrationCa } from '../../helpers/migrationPki.js';
import { D1, id, S } from './builders.js';
import { sourceWithInstances } from './migrationHarness.js';

class RecordingIssuer implements CredentialIssuer {
  readonly asked: CredentialRequest[] = [];
  failures = 0;
  /** Only asks for this side fail (while `failures` lasts); any side when unset. */
  failingSide: CredentialRequest['side'] | undefined;
  async issue(r: CredentialRequest): Promise<MigrationCredential> {
    this.asked.push(r);
    if (this.failures > 0 && (this.failingSide === undefined || this.failingSide === r.side)) {
      this.failures--;
      throw new Error('entropy ran out');
    }
    return { caPem: 'ca', certPem: `${r.side}@${r.host} for ${r.migrationId}/${r.instanceId} gen ${r.generation}`, keyPem: `key-${this.asked.length}` };
  }
}

function seenBy(h: Awaited<ReturnType<typeof sourceWithInstances>>): NcMigrateRequest[] {
  const seen: NcMigrateRequest[] = [];
  for (const host of [S, D1]) h.fake.nc(host).refuseMigrate = (req) => { seen.push(req); return undefined; };
  return seen;
}

describe('the CC issues per-migration credentials', () => {
  it('destination prepare and commit each carry a fresh credential for their side; nothing else does', async () => {
    const issuer = new RecordingIssuer();
    const h = await sourceWithInstances(1, { credentials: issuer });
    const seen = seenBy(h);
    const { migrationId, plan } = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.states(migrationId)).toEqual(['completed']);
    const lifetimeMs = credentialLifetimeMs(plan, plan.items[0]!);
    expect(issuer.asked).toEqual([
      { migrationId, instanceId: id(1), side: 'destination', host: D1, peerHost: S, lifetimeMs, generation: 0 },
      { migrationId, instanceId: id(1), side: 'source', host: S, peerHost: D1, lifetimeMs, generation: 0 },
    ]);
    const carried = seen.map((r) => [r.action, 'role' in r ? r.role : '', 'credential' in r ? r.credential?.certPem : undefined]);
    expect(carried).toContainEqual(['prepare', 'destination', `destination@${D1} for ${migrationId}/${id(1)} gen 0`]);
    expect(carried).toContainEqual(['commit', '', `source@${S} for ${migrationId}/${id(1)} gen 0`]);
    expect(carried.filter(([a, role]) => !(a === 'commit' || (a === 'prepare' && role === 'destination'))).every(([, , c]) => c === undefined)).toBe(true);
  });

  it('when issuing fails the step is not sent, and is retried with a credential', async () => {
    const issuer = new RecordingIssuer();
    // The destination's credential signed ahead (while the source persists the plan) and the one
    // signed when the prepare found that one failed.
    issuer.failingSide = 'destination';
    issuer.failures = 2;
    const h = await sourceWithInstances(1, { credentials: issuer });
    const seen = seenBy(h);
    const { migrationId } = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(seen.filter((r) => r.action === 'prepare' && r.role === 'destination')).toEqual([]);
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1_000); // the runner paces a failed step: 1 s, then doubling
      await h.settle();
    }
    expect(h.states(migrationId)).toEqual(['completed']);
    expect(seen.filter((r) => (r.action === 'commit' || (r.action === 'prepare' && r.role === 'destination')) && !('credential' in r && r.credential))).toEqual([]);
  });
});

describe('a re-join (issue 16 item 8): the source lost its credential before its hypervisor started the migration', () => {
  it('the CC re-issues both sides the generation the source asks for, the destination first, and the item completes', async () => {
    const issuer = new RecordingIssuer();
    const h = await sourceWithInstances(1, { credentials: issuer, mode: 'manual' });
    const { migrationId, plan } = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    expect(h.states(migrationId)).toEqual(['migrating']);
    const seen = seenBy(h);
    issuer.asked.length = 0;
    await h.loseCredential(migrationId, id(1));
    const lifetimeMs = credentialLifetimeMs(plan, plan.items[0]!);
    expect(issuer.asked).toEqual([
      { migrationId, instanceId: id(1), side: 'destination', host: D1, peerHost: S, lifetimeMs, generation: 1 },
      { migrationId, instanceId: id(1), side: 'source', host: S, peerHost: D1, lifetimeMs, generation: 1 },
    ]);
    // In that order on the wire: the source never holds a pair its destination does not.
    expect(seen.map((r) => `${r.action}${'role' in r ? `-${r.role}` : ''} ${'credential' in r ? r.credential?.certPem : ''}`)).toEqual([
      `prepare-destination destination@${D1} for ${migrationId}/${id(1)} gen 1`,
      `commit source@${S} for ${migrationId}/${id(1)} gen 1`,
    ]);
    // Nothing more is issued while the re-joined migration runs (within the CC's backstop); it completes.
    await h.advance(1_000);
    expect(issuer.asked).toHaveLength(2);
    await h.complete(migrationId, [id(1)]);
    expect(h.states(migrationId)).toEqual(['completed']);
  });

  it('a re-join the destination can no longer take (its record is gone) is rolled back: the VM never left the source', async () => {
    const h = await sourceWithInstances(1, { credentials: new RecordingIssuer(), mode: 'manual' });
    const { migrationId } = await h.migrate({ instanceId: id(1), destinations: [D1] });
    await h.settle();
    h.fake.nc(D1).incoming = [];
    await h.loseCredential(migrationId, id(1));
    expect(h.states(migrationId)).toEqual(['rolled-back']);
    const item = h.fake.nc(S).plans[0]?.items[0];
    expect(item?.error).toMatch(/no longer holds the incoming domain/);
  });
});

describe('caCredentialIssuer', () => {
  it('issues a certificate from the migration CA naming the item, valid from issue for the lifetime (± the clock skew allowance), with a fresh key and serial', async () => {
    const ca = makeMigrationCa('unit');
    const clock = new ManualClock(Date.parse('2026-11-24T04:00:00.400Z'));
    const issuer = caCredentialIssuer(ca, clock);
    const req: CredentialRequest = { migrationId: 'mig-00000001', instanceId: 'i-00000001', side: 'source', host: S, peerHost: D1, lifetimeMs: 120_000, generation: 0 };
    const [a, b] = [await issuer.issue(req), await issuer.issue(req)];
    const x = new X509Certificate(a!.certPem);
    expect(x.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(migrationIdentityOf(x)).toMatchObject({
      side: 'source', host: S, peerHost: D1, migrationId: 'mig-00000001', instanceId: 'i-00000001', generation: 0,
      notBefore: Date.parse('2026-11-24T03:59:00Z'), notAfter: Date.parse('2026-11-24T04:03:00Z'),
    });
    expect(a!.caPem).toBe(ca.certPem);
    expect(a!.keyPem).not.toBe(b!.keyPem);
    expect(x.serialNumber).not.toBe(new X509Certificate(b!.certPem).serialNumber);
    expect(x.checkPrivateKey((await import('node:crypto')).createPrivateKey(a!.keyPem))).toBe(true);
  });

  it('a peer whose clock is up to a minute behind or ahead of the CC accepts the credential; beyond that it refuses', async () => {
    const ca = makeMigrationCa('unit');
    const issuedAt = Date.parse('2026-11-24T04:00:00.400Z');
    const issuer = caCredentialIssuer(ca, new ManualClock(issuedAt));
    const destination = { migrationId: 'mig-00000001', instanceId: 'i-00000001', side: 'destination', host: D1, peerHost: S, lifetimeMs: 120_000, generation: 0 } as const;
    const [own, peer] = [await issuer.issue(destination), await issuer.issue({ ...destination, side: 'source', host: S, peerHost: D1 })];
    const check = (now: number) => checkMigrationPeer({
      own: migrationIdentityOf(new X509Certificate(own.certPem))!, ca: new X509Certificate(ca.certPem),
      peer: new X509Certificate(peer.certPem), now, used: () => false,
    });
    // The stream starts right after the commit: the destination reads its own, skewed clock.
    expect(check(issuedAt - 59_000)).toMatchObject({ ok: true });
    expect(check(issuedAt + 120_000 + 59_000)).toMatchObject({ ok: true });
    expect(check(issuedAt - 62_000)).toMatchObject({ ok: false, reason: 'not-yet-valid' });
    expect(check(issuedAt + 120_000 + 61_000)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('a CC directory without the migration CA is a coded start-up error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-migca-'));
    try {
      expect(() => loadMigrationCa(dir)).toThrow(expect.objectContaining({ code: 'TlsFileMissing' }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
