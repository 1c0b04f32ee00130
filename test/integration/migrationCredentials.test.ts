/**
 * Per-migration credentials against real processes: two simhv daemons on 127.0.25.1 (source) and
 * 127.0.25.2 (destination), each with its TLS migration listener. The destination is prepared for
 * one migration item with its credential; then every kind of wrong peer is refused with a coded
 * error and leaves the destination as it was (proved by the right source migrating afterwards), the
 * right one migrates the VM over mutually authenticated TLS, and its credential is spent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as plainRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainSpec } from '../../nc/hypervisor/driver.js';
import type { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';
import { SimhvHosts } from '../helpers/simhvPair.js';
import { credentialFor, credentialPair, makeMigrationCa } from '../helpers/migrationPki.js';
import { openStream as openRawStream, type StreamAnswer } from '../helpers/migrationStream.js';

const S = '127.0.25.1';
const D = '127.0.25.2';
const TLS_PORT = 16514;
const ITEM = { migrationId: 'mig-0000c0de', instanceId: 'i-0000c0de', source: S, destination: D };
const KEY = `${ITEM.migrationId}-${ITEM.instanceId}`;
const SPEC: DomainSpec = { id: ITEM.instanceId, imageId: 'emi-00000001', resources: { cores: 1, memoryMiB: 256, diskGiB: 5 } };
const ca = makeMigrationCa('it');
const foreign = makeMigrationCa('elsewhere');
const base = mkdtempSync(join(tmpdir(), 'ferry-migcred-'));
const hosts = new SimhvHosts(base, TLS_PORT);
const { procs, drivers } = hosts;
let src: SimDriver;
let dst: SimDriver;

/** What a client sees when the server aborts the TLS handshake before any certificate (a reset, or Node's words when it sees the close first). */
const NO_HANDSHAKE = /^ECONNRESET$|before secure TLS connection was established/;

const startHost = (host: string): Promise<SimDriver> => hosts.start(host);

const target = { host: D, port: TLS_PORT, caPem: ca.certPem, instanceId: ITEM.instanceId, key: KEY };

/** Opens the incoming stream for ITEM on the destination as a raw client presenting `cred`. */
const openStream = (cred: MigrationCredential | 'none', path?: string, servername?: string): Promise<StreamAnswer> => openRawStream(target, cred, path, servername);

/** A stream on libvirt's plaintext port, which a host run without --insecure-plaintext does not open. */
function plaintextStream(): Promise<StreamAnswer> {
  return new Promise((resolve) => {
    const req = plainRequest({ host: D, port: 16509, path: `/v1/incoming/${ITEM.instanceId}/${KEY}/stream`, method: 'POST' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const error = (JSON.parse(body) as { error: { code: string; fields?: { reason?: string } } }).error;
        resolve({ status: res.statusCode, code: error.code, reason: error.fields?.reason });
      });
    });
    req.on('error', (e) => resolve({ socketError: e.message }));
    req.end();
  });
}

async function destinationState(): Promise<unknown> {
  const d = await dst.info(ITEM.instanceId);
  return d && { state: d.state, resources: d.resources };
}

const pair = credentialPair(ca, ITEM);
const sourceSpec = { migrationId: ITEM.migrationId, instanceId: ITEM.instanceId, side: 'source' as const, host: S, peerHost: D };

beforeAll(async () => {
  src = await startHost(S);
  dst = await startHost(D);
  await src.connect();
  await dst.connect();
  await src.create(SPEC);
  await dst.prepareIncoming(SPEC, KEY, pair.destination);
}, 60_000);

afterAll(async () => {
  for (const d of drivers) await d.close();
  for (const p of procs) await p.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

describe('per-migration credentials between two real simhv hosts', () => {
  const now = Date.now();
  const refusals: [string, () => MigrationCredential | 'none', string][] = [
    ['no certificate', () => 'none', 'no-certificate'],
    ['a certificate from a foreign CA', () => credentialPair(foreign, ITEM).source, 'foreign-ca'],
    ['a second migration\'s credential', () => credentialPair(ca, { ...ITEM, migrationId: 'mig-0000beef' }).source, 'other-migration'],
    ['a credential for another host', () => credentialPair(ca, { ...ITEM, source: '127.0.25.3' }).source, 'other-host'],
    ['an expired credential', () => credentialFor(ca, sourceSpec, { notBefore: now - 600_000, notAfter: now - 300_000 }), 'expired'],
    ['the destination\'s own credential', () => pair.destination, 'wrong-role'],
  ];

  it.each(refusals)('refuses %s with a coded error and changes nothing on the destination', async (_name, cred, reason) => {
    const before = await destinationState();
    const answer = await openStream(cred());
    expect(answer).toMatchObject({ status: 403, code: 'MigrationCredentialRejected', reason });
    expect(await destinationState()).toEqual(before);
    expect(before).toMatchObject({ state: 'paused' });
  });

  it('has no plaintext port for a stream to reach (a host run without --insecure-plaintext)', async () => {
    expect(await plaintextStream()).toEqual({ socketError: expect.stringContaining('ECONNREFUSED') });
    expect(await destinationState()).toMatchObject({ state: 'paused' });
  });

  it('refuses to prepare or start a migration without a credential, and nothing changes', async () => {
    const other = { ...SPEC, id: 'i-0000f00d' };
    expect(await dst.prepareIncoming(other, `${ITEM.migrationId}-${other.id}`).catch((e: { code: string }) => e.code)).toBe('MigrationCredentialInvalid');
    expect(await dst.info(other.id)).toBeUndefined();
    await expect(src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `http://${D}:16509` }))
      .rejects.toMatchObject({ code: 'MigrationCredentialInvalid' });
    expect((await src.info(ITEM.instanceId))?.state).toBe('running');
  });

  it('a server name with no TLS migration prepared gets no handshake; a path other than the server name\'s is not prepared', async () => {
    const other = `/v1/incoming/i-0000dead/${ITEM.migrationId}-i-0000dead/stream`;
    // No status at all: the handshake itself is refused (SNICallback has no certificate to serve).
    expect(await openStream(pair.source, other, 'i-0000dead')).toEqual({ socketError: expect.stringMatching(NO_HANDSHAKE) });
    expect(await openStream(pair.source, other)).toMatchObject({ status: 409, code: 'IncomingNotPrepared' });
    expect(await destinationState()).toMatchObject({ state: 'paused' });
  });

  it('the source refuses to migrate with a credential made for another migration, before anything moves', async () => {
    const other = credentialPair(ca, { ...ITEM, migrationId: 'mig-0000beef' }).source;
    await expect(src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `https://${D}:${TLS_PORT}`, credential: other }))
      .rejects.toMatchObject({ code: 'MigrationCredentialInvalid' });
    await expect(src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `https://${D}:${TLS_PORT}` }))
      .rejects.toMatchObject({ code: 'MigrationCredentialInvalid' });
    expect((await src.info(ITEM.instanceId))?.state).toBe('running');
  });

  it('migrates with the right credentials over mutual TLS, after which the credential is spent', async () => {
    const stats = await src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `https://${D}:${TLS_PORT}`, credential: pair.source });
    expect(stats.bytesTransferred).toBeGreaterThan(0);
    expect((await dst.info(ITEM.instanceId))?.state).toBe('running');
    expect(await src.info(ITEM.instanceId)).toBeUndefined();

    // Replay after completion: the destination holds no migration for it any more, so no handshake.
    expect(await openStream(pair.source)).toEqual({ socketError: expect.stringMatching(NO_HANDSHAKE) });

    // A retry of the same item (prepared again with a fresh destination credential) still refuses
    // the used source credential: its serial is spent.
    await dst.destroy(ITEM.instanceId);
    await dst.prepareIncoming(SPEC, KEY, credentialPair(ca, ITEM).destination);
    expect(await openStream(pair.source)).toMatchObject({ status: 403, code: 'MigrationCredentialRejected', reason: 'replayed' });
    expect(await destinationState()).toMatchObject({ state: 'paused' });
  });

  it('a replay through a (restarted) source host is refused with a coded error and the VM keeps running there', async () => {
    await dst.abortIncoming(ITEM.instanceId, KEY); // rollback: the destination forgets the credential
    // A restarted source has no record of the finished migration, so the same id starts a new one.
    const old = procs.shift();
    await old?.kill('SIGKILL');
    await drivers.shift()?.close();
    src = await startHost(S);
    await src.connect();
    await src.create(SPEC);
    await expect(src.migrateOut(ITEM.instanceId, { migrationId: KEY, destinationUri: `https://${D}:${TLS_PORT}`, credential: pair.source }))
      .rejects.toMatchObject({ code: 'MigrationCredentialRejected' });
    expect((await src.info(ITEM.instanceId))?.state).toBe('running');
    expect(await dst.info(ITEM.instanceId)).toBeUndefined();
  });
});
