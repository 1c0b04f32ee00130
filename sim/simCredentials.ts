/**
 * Per-migration credentials in the simulator: the CCs issue them with the real issuer
 * (cc/migration/credentialIssuer.ts) from a migration CA of the run, the NCs require them, and the
 * simulated migration channel checks them as the TLS stream does (migrationNet.ts). Only where the
 * material comes from differs, so that a seed stays a seed and thousands of them stay fast: the RSA
 * keys are made once per process (a CA pair, and one pair every credential shares: key generation
 * is the slow part and would run off the simulated clock), serials are drawn from the seed.
 */
import { caCredentialIssuer, type CredentialIssuer, type MigrationCa, type PemKeyPair } from '../cc/migration/credentialIssuer.js';
import type { Clock } from '../shared/clock.js';
import { buildCaCertificate, certificateToPem, generateRsaKeys, privateKeyToPem, serialHex, type KeyPair } from '../shared/pki/certificates.js';
import { migrationCaName } from '../shared/pki/migrationCertificates.js';
import type { Prng } from './prng.js';
import forge from 'node-forge';

const SIM_CLOUD = 'sim';

let keys: { readonly ca: KeyPair; readonly leaf: PemKeyPair } | undefined;

function simKeys(): { readonly ca: KeyPair; readonly leaf: PemKeyPair } {
  if (!keys) {
    const leaf = generateRsaKeys();
    keys = {
      ca: generateRsaKeys(),
      leaf: { publicKey: forge.pki.publicKeyToPem(leaf.publicKey), privateKey: privateKeyToPem(leaf.privateKey) },
    };
  }
  return keys;
}

const cas = new Map<number, MigrationCa>();

/** The run's migration CA, valid from its start for ten years (one per start time and process: signing it is forge's, and slow). */
export function simMigrationCa(startMs: number): MigrationCa {
  let made = cas.get(startMs);
  if (!made) {
    const { ca } = simKeys();
    const cert = buildCaCertificate({
      cloudId: SIM_CLOUD, commonName: migrationCaName(SIM_CLOUD), keys: ca, serial: serialHex(new Uint8Array(16).fill(0x5a)), validity: { now: new Date(startMs), days: 3650 },
    });
    made = { cloudId: SIM_CLOUD, cert, certPem: certificateToPem(cert), key: ca.privateKey };
    cas.set(startMs, made);
  }
  return made;
}

/** A CC's issuer: the real one, with the process's shared leaf pair and a serial per credential from `rng`. */
export function simCredentialIssuer(ca: MigrationCa, clock: Clock, rng: Prng): CredentialIssuer {
  const leaf = simKeys().leaf;
  return caCredentialIssuer(ca, clock, {
    keyPair: () => Promise.resolve(leaf),
    serial: () => serialHex(Uint8Array.from({ length: 16 }, () => rng.int(0, 255))),
  });
}
