/**
 * How the built euca-* commands find their keys: EC2_ACCESS_KEY/EC2_SECRET_KEY, a credentials
 * file (--credentials, FERRY_CREDENTIALS), and what they say when they have none or a wrong one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import { resolveClient } from '../../clc/cli/clientCredentials.js';
import { formatCredentialsFile } from '../../shared/auth/credentialsFile.js';
import { systemClock } from '../../shared/clock.js';
import { testAuthenticator, TEST_ADMIN } from './authFixtures.js';
import { ensureBuilt } from './buildOnce.js';
import { runBuiltCli } from './cliRunner.js';
import { harness } from './harness.js';

const HOST = '127.0.12.1';
let server: Server;
let url: string;
let dir: string;
let credFile: string;

beforeAll(async () => {
  await ensureBuilt();
  const h = await harness({ authenticator: () => testAuthenticator(systemClock) });
  server = await new Promise<Server>((resolve) => { const s = h.app.listen(0, HOST, () => resolve(s)); });
  url = `http://${HOST}:${(server.address() as AddressInfo).port}${CLC_PATH}`;
  dir = mkdtempSync(join(tmpdir(), 'ferry-cli-auth-'));
  credFile = join(dir, 'admin.credentials');
  writeFileSync(credFile, formatCredentialsFile({ ...TEST_ADMIN, url }, 'test'), { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('euca-* credentials', () => {
  it('--credentials FILE signs with its keys and uses its EC2_URL', async () => {
    const r = await runBuiltCli('describeAvailabilityZones', ['--credentials', credFile], {});
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('AVAILABILITYZONE');
  });

  it('FERRY_CREDENTIALS names the file too', async () => {
    const r = await runBuiltCli('describeAvailabilityZones', [], { FERRY_CREDENTIALS: credFile });
    expect([r.code, r.stderr]).toEqual([0, '']);
  });

  it('a wrong secret is SignatureDoesNotMatch, exit 1', async () => {
    const r = await runBuiltCli('describeNodes', [], { EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey, EC2_SECRET_KEY: 'nope' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^SignatureDoesNotMatch: /);
  });

  it('a named credentials file that does not exist is an error naming it, exit 1', async () => {
    const r = await runBuiltCli('describeNodes', [], { EC2_URL: url, FERRY_CREDENTIALS: join(dir, 'none') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no such file');
  });

  it('only one of the two variables is a usage error naming the other', async () => {
    const r = await runBuiltCli('describeNodes', [], { EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('EC2_SECRET_KEY is not set');
  });
});

describe('resolveClient', () => {
  it('prefers the environment, then the file; --url over EC2_URL over the file', async () => {
    const env = { EC2_ACCESS_KEY: 'AK', EC2_SECRET_KEY: 'SK' };
    expect(await resolveClient(env, { defaultPath: credFile })).toMatchObject({ credentials: { accessKey: 'AK', secretKey: 'SK' } });
    expect(await resolveClient({}, { defaultPath: credFile })).toMatchObject({ url, credentials: { accessKey: TEST_ADMIN.accessKey }, source: credFile });
    expect((await resolveClient({ EC2_URL: 'http://e/' }, { defaultPath: credFile })).url).toBe('http://e/');
    expect((await resolveClient({ EC2_URL: 'http://e/' }, { defaultPath: credFile, url: 'http://u/' })).url).toBe('http://u/');
  });

  it('goes unsigned when the default file does not exist, but not when a named one does not', async () => {
    expect(await resolveClient({}, { defaultPath: join(dir, 'absent') })).toMatchObject({ credentials: undefined, source: 'none' });
    await expect(resolveClient({}, { credentialsPath: join(dir, 'absent') })).rejects.toThrow(/no such file/);
  });

  it('hints at the missing keys when a signing CLC refuses an unsigned call', async () => {
    const { QueryClient } = await import('../../clc/cli/queryClient.js');
    const client = new QueryClient({ url, credentials: undefined, timeoutMs: 5_000 });
    await expect(client.call('DescribeNodes')).rejects.toThrow(/had no credentials: set EC2_ACCESS_KEY and EC2_SECRET_KEY/);
  });
});
