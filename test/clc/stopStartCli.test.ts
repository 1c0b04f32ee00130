/**
 * euca-stop-instances / euca-start-instances / euca-reboot-instances (issue 18 part 5), built,
 * against an in-process CLC on 127.0.80.1 over the fake CCs: printed rows, --force passed on, a coded
 * refusal on stderr with exit 1.
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

const HOST = '127.0.80.1';

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

async function running(): Promise<string> {
  const run = await cli('runInstances', ['emi-00000001', '-z', 'cluster01']);
  const id = /INSTANCE\t(i-[0-9a-f]{8})/.exec(run.stdout)?.[1] as string;
  h.clusters.setInstanceState(id, 'running');
  return id;
}

describe('euca-stop-instances, euca-start-instances, euca-reboot-instances', () => {
  it('stop --force prints INSTANCE id running stopped; start prints INSTANCE id stopped running node; reboot prints nothing', async () => {
    const id = await running();
    const host = h.clusters.instance(id)?.host as string;
    const r = await cli('rebootInstancesMain', [id]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(h.clusters.calls.some((c) => c.op === 'ccRebootInstance')).toBe(true);
    const s = await cli('stopInstancesMain', ['--force', id]);
    expect(s.stderr).toBe('');
    expect(lines(s.stdout)).toEqual([`INSTANCE\t${id}\trunning\tstopped`]);
    expect(h.clusters.calls.find((c) => c.op === 'ccStopInstance')?.req).toMatchObject({ instanceId: id, force: true });
    const st = await cli('startInstancesMain', [id]);
    expect(lines(st.stdout)).toEqual([`INSTANCE\t${id}\tstopped\trunning\t${host}`]);
  });

  it('reboot of a stopped instance: the code on stderr, exit 1, nothing rebooted', async () => {
    const id = await running();
    h.clusters.setInstanceState(id, 'stopped');
    const r = await cli('rebootInstancesMain', [id]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^IncorrectInstanceState: /);
    expect(h.clusters.calls.some((c) => c.op === 'ccRebootInstance')).toBe(false);
  });
});
