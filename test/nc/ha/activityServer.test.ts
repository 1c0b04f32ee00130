/**
 * ncCheckActivity at the NC's HTTP edge (nc/server.ts): a neighbour's look at a suspect host's files
 * on shared storage, over the wire contract; `unknown` without shared storage; --storage-dir parsed.
 */
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseNcConfig } from '../../../nc/config.js';
import { fsSharedStorage } from '../../../nc/ha/activityCheck.js';
import { fsDiskIo } from '../../../nc/hypervisor/sim/diskIo.js';
import { heartbeatPath } from '../../../nc/hypervisor/sim/hostLedger.js';
import { createNcApp } from '../../../nc/server.js';
import { silentLogger } from '../../../shared/log.js';
import { NC_PATH } from '../../../shared/wire/transport.js';
import { decodeMessage, encodeMessage } from '../../../shared/wire/xmlCodec.js';
import { wireHeaders } from '../../helpers/wireHeaders.js';
import { harness } from '../fixtures.js';

const SUSPECT = '127.0.10.2';
let shared: string;
let servers: Server[] = [];

beforeEach(async () => { shared = await mkdtemp(join(tmpdir(), 'ferry-nc-shared-')); });
afterEach(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  servers = [];
  await rm(shared, { recursive: true, force: true });
});

async function serve(withStorage: boolean): Promise<string> {
  const h = await harness();
  const server = createNcApp({ controller: h.controller, logger: silentLogger(), ...(withStorage ? { sharedStorage: fsSharedStorage(shared) } : {}) })
    .listen(0, '127.0.10.201');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  return `http://127.0.10.201:${(server.address() as AddressInfo).port}${NC_PATH}`;
}

async function check(url: string, since: number) {
  const res = await fetch(url, { method: 'POST', headers: wireHeaders('<ncCheckActivity/>'), body: encodeMessage('ncCheckActivity', { host: SUSPECT, since }) });
  expect(res.status).toBe(200);
  return (await decodeMessage(await res.text())).body;
}

describe('ncCheckActivity', () => {
  it("answers whether the suspect host wrote its heartbeat since the given time", async () => {
    await fsDiskIo().write(heartbeatPath(shared, SUSPECT), '1\n');
    const t = 1_700_000_000;
    await utimes(heartbeatPath(shared, SUSPECT), t, t);
    const url = await serve(true);
    expect(await check(url, t * 1000 - 1)).toMatchObject({ host: SUSPECT, outcome: 'active', newestWriteAt: t * 1000 });
    expect(await check(url, t * 1000 + 1)).toMatchObject({ outcome: 'inactive' });
  });

  it('is unknown on an NC without shared storage', async () => {
    expect(await check(await serve(false), 0)).toMatchObject({ outcome: 'unknown', detail: expect.stringContaining('--storage-dir') });
  });

  it('--storage-dir is optional and resolved', () => {
    const base = ['--host', '127.0.10.1', '--state-dir', '/tmp/nc', '--insecure-plaintext'];
    expect(parseNcConfig(base, {}).storageDir).toBeUndefined();
    expect(parseNcConfig([...base, '--storage-dir', 'rel/shared'], {}).storageDir).toBe(join(process.cwd(), 'rel/shared'));
    expect(parseNcConfig(base, { FERRY_NC_STORAGE_DIR: '/srv/shared' }).storageDir).toBe('/srv/shared');
  });
});
