import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { migrationUri, parseMigrationUri } from '../../../shared/pki/migrationCertificates.js';
import { checkMigrationPeer, credentialIdentity, migrationIdentityOf, type PeerRefusal } from '../../../shared/pki/migrationPeer.js';
import { credentialFor, credentialPair, makeMigrationCa } from '../../helpers/migrationPki.js';
import { issue, makeCa } from './fixtures.js';
import { generateRsaKeys } from '../../../shared/pki/certificates.js';

const ca = makeMigrationCa('t');
const foreignCa = makeMigrationCa('other');
const S = '127.0.1.1';
const D = '127.0.1.2';
const ITEM = { migrationId: 'mig-0000000a', instanceId: 'i-0000000a', source: S, destination: D };
const pair = credentialPair(ca, ITEM);
const x509 = (pem: string): X509Certificate => new X509Certificate(pem);
const destinationOwn = migrationIdentityOf(x509(pair.destination.certPem))!;
const NOW = Date.now();

describe('migration certificates', () => {
  it('name the side, the host, the migration item and the peer, with a fresh serial each', () => {
    expect(destinationOwn).toMatchObject({ side: 'destination', host: D, migrationId: ITEM.migrationId, instanceId: ITEM.instanceId, peerHost: S });
    const src = migrationIdentityOf(x509(pair.source.certPem))!;
    expect(src).toMatchObject({ side: 'source', host: S, peerHost: D });
    expect(src.serial).not.toBe(destinationOwn.serial);
    // Only what each side needs: the source is a TLS client, the destination a TLS server.
    expect(x509(pair.source.certPem).keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(x509(pair.destination.certPem).keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('the binding URI round-trips, with its credential generation (0 unless named), and nothing else parses as one', () => {
    const u = migrationUri({ migrationId: 'mig-00000001', instanceId: 'i-00000002', peerHost: '127.0.1.9' });
    expect(u).toBe('urn:ferry:migration:mig-00000001:i-00000002:gen:0:peer:127.0.1.9');
    expect(parseMigrationUri(u)).toEqual({ migrationId: 'mig-00000001', instanceId: 'i-00000002', generation: 0, peerHost: '127.0.1.9' });
    const re = migrationUri({ migrationId: 'mig-00000001', instanceId: 'i-00000002', peerHost: '127.0.1.9', generation: 3 });
    expect(parseMigrationUri(re)).toEqual({ migrationId: 'mig-00000001', instanceId: 'i-00000002', generation: 3, peerHost: '127.0.1.9' });
    const bad = [
      '', 'urn:ferry:migration:a:b', 'https://x', `${u}:extra`, u.replace('peer', 'host'),
      // without a generation, a negative, a padded or a non-numeric one
      'urn:ferry:migration:mig-00000001:i-00000002:peer:127.0.1.9', u.replace('gen:0', 'gen:-1'), u.replace('gen:0', 'gen:01'), u.replace('gen:0', 'gen:x'),
    ];
    for (const b of bad) expect(parseMigrationUri(b), b).toBeUndefined();
  });

  it('a re-issued pair names its generation; the first names 0', () => {
    expect(destinationOwn.generation).toBe(0);
    const re = credentialPair(ca, { ...ITEM, generation: 2 });
    expect(migrationIdentityOf(x509(re.source.certPem))).toMatchObject({ side: 'source', host: S, peerHost: D, generation: 2 });
    expect(credentialIdentity(re.destination)).toMatchObject({ side: 'destination', generation: 2 });
    expect(credentialIdentity({ certPem: 'not a certificate' })).toBeUndefined();
  });

  it('are signed by OpenSSL with exactly the bytes forge would sign (PKCS#1 v1.5 is deterministic)', () => {
    const pem = pair.source.certPem;
    const again = forge.pki.certificateFromPem(pem);
    again.sign(ca.key, forge.md.sha256.create());
    expect(forge.pki.certificateToPem(again)).toBe(pem);
    expect(x509(pem).verify(x509(ca.certPem).publicKey)).toBe(true);
  });

  it('a tier certificate is not a migration certificate', () => {
    const tierCa = makeCa('t');
    const tier = issue(tierCa, { role: 'nc', host: S }, generateRsaKeys());
    expect(migrationIdentityOf(x509(tier.certPem))).toBeUndefined();
  });
});

describe('checkMigrationPeer (the destination checks the source)', () => {
  const check = (peerPem: string | undefined, used: (s: string) => boolean = () => false, now = NOW) => checkMigrationPeer({
    own: destinationOwn, ca: x509(ca.certPem), peer: peerPem ? x509(peerPem) : undefined, now, used,
  });

  it('accepts the source certificate of the same item', () => {
    const r = check(pair.source.certPem);
    expect(r.ok).toBe(true);
  });

  const cases: [string, () => string | undefined, PeerRefusal][] = [
    ['no certificate', () => undefined, 'no-certificate'],
    ['a foreign CA', () => credentialPair(foreignCa, ITEM).source.certPem, 'foreign-ca'],
    ['a tier certificate', () => issue(makeCa('t'), { role: 'nc', host: S }, generateRsaKeys()).certPem, 'foreign-ca'],
    ['the destination\'s own kind (wrong role)', () => credentialPair(ca, ITEM).destination.certPem, 'wrong-role'],
    ['a second migration\'s credential', () => credentialPair(ca, { ...ITEM, migrationId: 'mig-0000000b' }).source.certPem, 'other-migration'],
    ['another instance of the same migration', () => credentialPair(ca, { ...ITEM, instanceId: 'i-0000000b' }).source.certPem, 'other-migration'],
    ['another source host', () => credentialPair(ca, { ...ITEM, source: '127.0.1.3' }).source.certPem, 'other-host'],
    ['one for another destination', () => credentialPair(ca, { ...ITEM, destination: '127.0.1.3' }).source.certPem, 'other-host'],
    ['an expired one', () => credentialFor(ca, { ...ITEM, side: 'source', host: S, peerHost: D }, { notBefore: NOW - 120_000, notAfter: NOW - 60_000 }).certPem, 'expired'],
    ['one not valid yet', () => credentialFor(ca, { ...ITEM, side: 'source', host: S, peerHost: D }, { notBefore: NOW + 60_000, notAfter: NOW + 120_000 }).certPem, 'not-yet-valid'],
    ['a later generation\'s (this side was superseded)', () => credentialPair(ca, { ...ITEM, generation: 1 }).source.certPem, 'superseded'],
    // A re-issued pair binds the item and the hosts as the first did: only its generation differs.
    ['a later generation\'s for another migration', () => credentialPair(ca, { ...ITEM, migrationId: 'mig-0000000b', generation: 1 }).source.certPem, 'other-migration'],
    ['a later generation\'s for another host pair', () => credentialPair(ca, { ...ITEM, source: '127.0.1.3', generation: 1 }).source.certPem, 'other-host'],
  ];
  it.each(cases)('refuses %s', (_name, peer, reason) => {
    const r = check(peer());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });

  it('after a re-issue each side accepts only the other side of its own generation: a superseded credential is refused both ways', () => {
    const re = credentialPair(ca, { ...ITEM, generation: 1 });
    const reDestination = migrationIdentityOf(x509(re.destination.certPem))!;
    const reSource = migrationIdentityOf(x509(re.source.certPem))!;
    const at = (own: typeof reSource, peer: string) => checkMigrationPeer({ own, ca: x509(ca.certPem), peer: x509(peer), now: NOW, used: () => false });
    expect(at(reDestination, re.source.certPem)).toMatchObject({ ok: true });
    expect(at(reSource, re.destination.certPem)).toMatchObject({ ok: true });
    // The destination holding generation 1 refuses the source credential the dead NC was given (0) ...
    expect(at(reDestination, pair.source.certPem)).toMatchObject({ ok: false, reason: 'superseded' });
    // ... and a source of generation 1 refuses a destination still serving (or impersonated with) 0.
    expect(at(reSource, pair.destination.certPem)).toMatchObject({ ok: false, reason: 'superseded' });
    expect(at(reSource, credentialPair(ca, { ...ITEM, generation: 2 }).destination.certPem)).toMatchObject({ ok: false, reason: 'superseded' });
  });

  it('refuses a replay: a serial already used', () => {
    const serial = migrationIdentityOf(x509(pair.source.certPem))!.serial;
    const r = check(pair.source.certPem, (s) => s === serial);
    expect(r).toMatchObject({ ok: false, reason: 'replayed' });
  });
});
