/**
 * euca-pause-instances / euca-unpause-instances (issue 18), built, against an in-process CLC on
 * 127.0.76.1 over the fake CCs: printed rows, a coded refusal on stderr with exit 1.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import { systemClock } from '../../shared/clock.js';
import { testAuthenticator, TEST_ADMIN } from './authFixtures.js';
import { ensureBuilt } from './buildOnce.js';
import { lines, runBuiltCli, type CliRun } from './cliRunner.js';
import { harness, type Harness } from './harness.js';

const HOST = '127.0.76.1';

let h: Harness;
let server: Server;
let url: string;

function cli(file: string, args: string[]): Promise<CliRun> {
  return runBuiltCli(file, args, { EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey, EC2_SECRET_KEY: TEST_ADMIN.secretKey });
}

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

beforeEach(async () => {
  h = await harness({ authenticator: () => testAuthenticator(systemClock) });
  server = await new Promise<Server>((resolve) => { const s = h.app.listen(0, HOST, () => resolve(s)); });
  url = `http://${HOST}:${(server.address() as AddressInfo).port}${CLC_PATH}`;
  return async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
});

describe('euca-pause-instances, euca-unpause-instances', () => {
  it('prints INSTANCE id running paused node was-unpaused, then unpaused', async () => {
    const run = await cli('runInstances', ['emi-00000001', '-z', 'cluster01']);
    const id = /INSTANCE\t(i-[0-9a-f]{8})/.exec(run.stdout)?.[1] as string;
    h.clusters.setInstanceState(id, 'running');
    const host = h.clusters.instance(id)?.host as string;
    const p = await cli('pauseInstancesMain', [id]);
    expect(p.stderr).toBe('');
    expect(p.code).toBe(0);
    expect(lines(p.stdout)).toEqual([`INSTANCE\t${id}\trunning\tpaused\t${host}\twas-unpaused`]);
    expect(h.clusters.instance(id)?.paused).toBe(true);
    const u = await cli('unpauseInstancesMain', [id]);
    expect(lines(u.stdout)).toEqual([`INSTANCE\t${id}\trunning\tunpaused\t${host}\twas-paused`]);
  });

  it('an instance that is not running: the code on stderr, exit 1, nothing paused', async () => {
    const run = await cli('runInstances', ['emi-00000001', '-z', 'cluster01']);
    const id = /INSTANCE\t(i-[0-9a-f]{8})/.exec(run.stdout)?.[1] as string;
    h.clusters.setInstanceState(id, 'stopped');
    const r = await cli('pauseInstancesMain', [id]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^IncorrectInstanceState: /);
    expect(h.clusters.calls.some((c) => c.op === 'ccPauseInstance')).toBe(false);
  });
});
