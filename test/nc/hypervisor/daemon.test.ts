/**
 * The daemon's HTTP edges in process (supertest over the real express apps and a SimHost with
 * in-memory store and files): bad input gets a coded error and changes nothing; the plaintext
 * migration port serves incoming streams and nothing else; a host that requires credentials refuses
 * migrations without one.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ManualClock } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';
import { createSimHvApp } from '../../../nc/hypervisor/sim/daemon.js';
import { createPlaintextMigrationServer } from '../../../nc/hypervisor/sim/migrationListeners.js';
import { MemoryDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { openSimHvMemoryStore } from '../../../nc/hypervisor/sim/hostStore.js';
import { InProcessNetwork } from '../../../nc/hypervisor/sim/migrationChannel.js';
import { MIGRATION_DEFAULTS } from '../../../nc/hypervisor/sim/migrationModel.js';
import { SimHost } from '../../../nc/hypervisor/sim/simHost.js';
import type express from 'express';

const spec = { id: 'i-00000001', imageId: 'emi-1', resources: { cores: 1, memoryMiB: 512, diskGiB: 10 } };
let app: express.Express;
let host: SimHost;

async function openHost(requireMigrationCredentials: boolean): Promise<SimHost> {
  const clock = new ManualClock(0);
  const h = await SimHost.open(
    {
      host: '127.0.9.21', capacity: { cores: 2, memoryMiB: 1024, diskGiB: 100 }, storageDir: '/shared', migration: MIGRATION_DEFAULTS,
      writeIntervalMs: 1000, timeScale: 1, requireMigrationCredentials,
    },
    { clock, store: await openSimHvMemoryStore(), disk: new MemoryDiskIo(clock), dialer: new InProcessNetwork() },
  );
  app = createSimHvApp(h, clock, silentLogger()).app;
  return h;
}

beforeEach(async () => {
  host = await openHost(false);
});

async function domainsNow(): Promise<string[]> {
  const res = await request(app).get('/v1/domains').expect(200);
  return (res.body as { domains: { id: string }[] }).domains.map((d) => d.id);
}

describe('sim daemon HTTP edge', () => {
  it('creates, gets, lists and destroys', async () => {
    const created = await request(app).post('/v1/domains').send(spec).expect(200);
    expect(created.body).toMatchObject({ id: spec.id, state: 'running' });
    await request(app).get(`/v1/domains/${spec.id}`).expect(200);
    expect(await domainsNow()).toEqual([spec.id]);
    await request(app).delete(`/v1/domains/${spec.id}`).expect(204);
    await request(app).delete(`/v1/domains/${spec.id}`).expect(204);
    expect(await domainsNow()).toEqual([]);
  });

  it.each<[string, () => request.Test, number, string]>([
    ['malformed JSON', () => request(app).post('/v1/domains').set('content-type', 'application/json').send('{"id":'), 400, 'HypervisorBadRequest'],
    ['a body over the limit', () => request(app).post('/v1/domains').set('content-type', 'application/json').send(JSON.stringify({ ...spec, imageId: 'x'.repeat(70_000) })), 413, 'HypervisorRequestTooLarge'],
    ['a spec missing resources', () => request(app).post('/v1/domains').send({ id: 'i-1', imageId: 'e' }), 400, 'HypervisorBadRequest'],
    ['an id that escapes the storage dir', () => request(app).post('/v1/domains').send({ ...spec, id: '../../etc/passwd' }), 400, 'HypervisorBadRequest'],
    ['a domain over capacity', () => request(app).post('/v1/domains').send({ ...spec, resources: { cores: 4, memoryMiB: 512, diskGiB: 1 } }), 409, 'InsufficientHostResources'],
    ['an unknown domain', () => request(app).get('/v1/domains/i-0000dead'), 404, 'DomainNotFound'],
    ['an unknown endpoint', () => request(app).get('/v2/nothing'), 404, 'HypervisorUnknownEndpoint'],
    ['migrating an unknown domain', () => request(app).post('/v1/domains/i-0000dead/migrations').send({ migrationId: 'm-1', destinationUri: 'http://127.0.9.22:1' }), 404, 'DomainNotFound'],
    ['a destination off loopback', () => request(app).post(`/v1/domains/${spec.id}/migrations`).send({ migrationId: 'm-1', destinationUri: 'http://10.1.2.3:16509' }), 400, 'HypervisorBadRequest'],
    // Streams come in on the migration ports only: the control socket has no stream endpoint.
    ['a migration stream', () => request(app).post(`/v1/incoming/${spec.id}/m-1/stream`).set('content-type', 'application/octet-stream').send(Buffer.alloc(0)), 404, 'HypervisorUnknownEndpoint'],
  ])('answers %s with a coded error and changes nothing', async (_name, send, status, code) => {
    const res = await send().expect(status);
    expect(res.body.error).toMatchObject({ code });
    expect(typeof res.body.error.message).toBe('string');
    expect(await domainsNow()).toEqual([]);
  });

  it('refuses a second definition of an id with another spec', async () => {
    await request(app).post('/v1/domains').send(spec).expect(200);
    const res = await request(app).post('/v1/domains').send({ ...spec, imageId: 'emi-2' }).expect(409);
    expect(res.body.error.code).toBe('DomainExists');
    expect(host.get(spec.id)?.imageId).toBe('emi-1');
  });

  it('reports an unknown migration as unknown, not as an error', async () => {
    const res = await request(app).get(`/v1/domains/${spec.id}/migrations/m-9?waitMs=10`).expect(200);
    expect(res.body).toEqual({ state: 'unknown' });
  });

  it('prepares and aborts an incoming domain', async () => {
    const prepared = await request(app).post('/v1/incoming').send({ spec, migrationId: 'm-1' }).expect(200);
    expect(prepared.body.state).toBe('paused');
    await request(app).delete(`/v1/incoming/${spec.id}/m-1`).expect(204);
    expect(await domainsNow()).toEqual([]);
  });
});

describe('the plaintext migration port (--insecure-plaintext)', () => {
  it.each<[string, (r: request.Agent) => request.Test]>([
    ['define a domain', (r) => r.post('/v1/domains').send(spec)],
    ['destroy a domain', (r) => r.delete(`/v1/domains/${spec.id}`)],
    ['prepare an incoming domain', (r) => r.post('/v1/incoming').send({ spec, migrationId: 'm-1' })],
    ['send a domain away', (r) => r.post(`/v1/domains/${spec.id}/migrations`).send({ migrationId: 'm-1', destinationUri: 'http://127.0.9.22:16509' })],
    ['list domains', (r) => r.get('/v1/domains')],
  ])('cannot %s: HypervisorUnknownEndpoint, nothing changes', async (_name, send) => {
    await request(app).post('/v1/domains').send(spec).expect(200);
    const res = await send(request.agent(createPlaintextMigrationServer(host, silentLogger()))).expect(404);
    expect(res.body.error.code).toBe('HypervisorUnknownEndpoint');
    expect(await domainsNow()).toEqual([spec.id]);
    expect(host.get(spec.id)?.state).toBe('running');
  });

  it('answers a stream for a migration never prepared with IncomingNotPrepared', async () => {
    const res = await request(createPlaintextMigrationServer(host, silentLogger()))
      .post(`/v1/incoming/${spec.id}/m-1/stream`).set('content-type', 'application/octet-stream').send(Buffer.alloc(0)).expect(409);
    expect(res.body.error.code).toBe('IncomingNotPrepared');
    expect(await domainsNow()).toEqual([]);
  });
});

describe('a host that requires per-migration credentials (no --insecure-plaintext)', () => {
  beforeEach(async () => {
    host = await openHost(true);
  });

  it('refuses to prepare an incoming domain without a credential, holding nothing', async () => {
    const res = await request(app).post('/v1/incoming').send({ spec, migrationId: 'm-1' }).expect(400);
    expect(res.body.error).toMatchObject({ code: 'MigrationCredentialInvalid', fields: { id: spec.id, migrationId: 'm-1' } });
    expect(await domainsNow()).toEqual([]);
    expect(host.free()).toEqual({ cores: 2, memoryMiB: 1024, diskGiB: 100 });
  });

  it('refuses to send a domain away without a credential, to any destination; it keeps running', async () => {
    await request(app).post('/v1/domains').send(spec).expect(200);
    for (const destinationUri of ['http://127.0.9.22:16509', 'https://127.0.9.22:16514']) {
      const res = await request(app).post(`/v1/domains/${spec.id}/migrations`).send({ migrationId: 'm-1', destinationUri }).expect(400);
      expect(res.body.error.code).toBe('MigrationCredentialInvalid');
    }
    expect(host.get(spec.id)).toMatchObject({ state: 'running' });
    expect(host.migrationStatus(spec.id, 'm-1')).toEqual({ state: 'unknown' });
  });

  it('still defines and destroys domains for its owner', async () => {
    await request(app).post('/v1/domains').send(spec).expect(200);
    await request(app).delete(`/v1/domains/${spec.id}`).expect(204);
    expect(await domainsNow()).toEqual([]);
  });
});
