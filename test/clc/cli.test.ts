/**
 * The built euca-* commands (dist/clc/cli/*.js, and the bin/ wrappers) against an in-process CLC on
 * 127.0.12.1 over a fake Clusters: printed rows, stderr and exit codes.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import { systemClock } from '../../shared/clock.js';
import { testAuthenticator, TEST_ADMIN } from './authFixtures.js';
import { ensureBuilt } from './buildOnce.js';
import { lines, runBuiltCli, type CliRun } from './cliRunner.js';
import { harness, type Harness } from './harness.js';

const HOST = '127.0.12.1';

let h: Harness;
let server: Server;
let url: string;
let closedUrl: string;

function cli(file: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runBuiltCli(file, args, { EC2_URL: url, EC2_ACCESS_KEY: TEST_ADMIN.accessKey, EC2_SECRET_KEY: TEST_ADMIN.secretKey, ...env });
}

beforeAll(async () => {
  await ensureBuilt();
  const closed = await new Promise<Server>((resolve) => { const s = express().listen(0, HOST, () => resolve(s)); });
  closedUrl = `http://${HOST}:${(closed.address() as AddressInfo).port}${CLC_PATH}`;
  await new Promise((r) => closed.close(r));
}, 120_000);

beforeEach(async () => {
  // The CLI signs by the wall clock, so the authenticator checks against it too.
  h = await harness({ authenticator: () => testAuthenticator(systemClock) });
  server = await new Promise<Server>((resolve) => { const s = h.app.listen(0, HOST, () => resolve(s)); });
  url = `http://${HOST}:${(server.address() as AddressInfo).port}${CLC_PATH}`;
  return async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
});

describe('euca-run-instances, euca-describe-instances, euca-terminate-instances', () => {
  it('prints RESERVATION and INSTANCE rows', async () => {
    const r = await cli('runInstances', ['emi-00000001', '-n', '2', '-t', 'c1.medium', '-z', 'cluster02']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [res, ...insts] = lines(r.stdout);
    expect(res).toMatch(/^RESERVATION\tr-[0-9a-f]{8}\t000000000000\tdefault$/);
    expect(insts).toHaveLength(2);
    for (const l of insts) {
      expect(l).toMatch(/^INSTANCE\ti-[0-9a-f]{8}\temi-00000001\tpending\tc1\.medium\t2013-06-01T12:00:00\.000Z\tcluster02\t127\.0\.12\.2[12]\tnone\t\t$/);
    }
    const call = h.clusters.calls.find((c) => c.op === 'ccRunInstances');
    expect(call?.req).toMatchObject({ minCount: 2, instanceIds: expect.any(Array) });
  });

  it('-n MIN:MAX sends both counts', async () => {
    const r = await cli('runInstances', ['emi-00000001', '-n', '1:3']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).filter((l) => l.startsWith('INSTANCE'))).toHaveLength(3);
  });

  it('-n MIN-MAX (euca2ools\' form) sends both counts', async () => {
    const r = await cli('runInstances', ['emi-00000001', '-n', '1-2']);
    expect(r.code).toBe(0);
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances').at(-1)?.req).toMatchObject({ minCount: 1, instanceIds: expect.any(Array) });
    expect(lines(r.stdout).filter((l) => l.startsWith('INSTANCE'))).toHaveLength(2);
  });

  it('--client-token makes a second run show the first reservation, launching nothing', async () => {
    const first = await cli('runInstances', ['emi-00000001', '--client-token', 'cli-tok']);
    const runs = h.clusters.calls.filter((c) => c.op === 'ccRunInstances').length;
    const again = await cli('runInstances', ['emi-00000001', '--client-token', 'cli-tok']);
    expect([first.code, again.code]).toEqual([0, 0]);
    expect(again.stdout).toBe(first.stdout);
    expect(h.clusters.calls.filter((c) => c.op === 'ccRunInstances')).toHaveLength(runs);
  });

  it('describe with ids and filters, then terminate', async () => {
    const run = await cli('runInstances', ['emi-00000001', '-n', '2', '-z', 'cluster01']);
    const ids = lines(run.stdout).filter((l) => l.startsWith('INSTANCE')).map((l) => l.split('\t')[1] as string);
    await cli('runInstances', ['emi-00000002', '-z', 'cluster02']);

    const all = await cli('describeInstances', []);
    expect(lines(all.stdout).filter((l) => l.startsWith('RESERVATION'))).toHaveLength(2);
    expect(lines(all.stdout).filter((l) => l.startsWith('INSTANCE'))).toHaveLength(3);

    const filtered = await cli('describeInstances', ['--filter', 'availability-zone=cluster01', '--filter', 'image-id=emi-00000001']);
    expect(lines(filtered.stdout).filter((l) => l.startsWith('INSTANCE')).map((l) => l.split('\t')[1])).toEqual(ids);

    const one = await cli('describeInstances', [ids[0] as string]);
    expect(lines(one.stdout).filter((l) => l.startsWith('INSTANCE')).map((l) => l.split('\t')[1])).toEqual([ids[0]]);

    const t = await cli('terminateInstances', ids);
    expect(t.code).toBe(0);
    expect(lines(t.stdout)).toEqual(ids.map((id) => `INSTANCE\t${id}\tpending\tterminated`));
  });

  it('an EC2 error prints CODE: message on stderr and exits 1', async () => {
    const r = await cli('terminateInstances', ['i-0000dead']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("InvalidInstanceID.NotFound: The instance ID 'i-0000dead' does not exist\n");
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });

  it('a usage error exits non-zero without calling the cloud', async () => {
    const r = await cli('runInstances', ['emi-00000001', '-n', 'lots']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('MIN, MIN-MAX or MIN:MAX');
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('euca-describe-nodes', () => {
  it('prints NODE rows with INSTANCE rows beneath', async () => {
    const run = await cli('runInstances', ['emi-00000001', '-n', '2', '-t', 'm1.medium', '-z', 'cluster01']);
    const ids = lines(run.stdout).filter((l) => l.startsWith('INSTANCE')).map((l) => l.split('\t')[1]);
    const r = await cli('describeNodes', []);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'NODE\tcluster01\t127.0.12.11\tENABLED\t2/4\t1024/4096\t20/100',
      `INSTANCE\t${ids[0]}\tpending\tm1.medium`,
      `INSTANCE\t${ids[1]}\tpending\tm1.medium`,
      'NODE\tcluster01\t127.0.12.12\tENABLED\t0/4\t0/4096\t0/100',
      'NODE\tcluster02\t127.0.12.21\tENABLED\t0/4\t0/4096\t0/100',
      'NODE\tcluster02\t127.0.12.22\tENABLED\t0/4\t0/4096\t0/100',
    ]);
  });

  it('names an unreachable partition on stderr and still exits 0', async () => {
    h.clusters.down.add('cluster02');
    const r = await cli('describeNodes', []);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toHaveLength(2);
    expect(r.stderr).toMatch(/^warning: partition cluster02 is unavailable/);
  });

  it('--json prints the parsed response', async () => {
    const r = await cli('describeNodes', ['--json', '127.0.12.21']);
    const j = JSON.parse(r.stdout) as { nodeSet: { host: string; capacity: { cores: number } }[] };
    expect(j.nodeSet.map((n) => [n.host, n.capacity.cores])).toEqual([['127.0.12.21', 4]]);
  });
});

describe('euca-describe-services and euca-modify-service', () => {
  it('disables and enables a node', async () => {
    const off = await cli('modifyService', ['-s', 'DISABLED', '127.0.12.11']);
    expect(off.code).toBe(0);
    const rows = lines(off.stdout);
    expect(rows[0]).toBe('SERVICE\tnode\tcluster01\t127.0.12.11\tDISABLED');
    expect(rows[1]).toBe('AVAILABILITYZONE\t|- vm types\tfree / max\tcpu\tram\tdisk');
    expect(rows).toContain('AVAILABILITYZONE\t|- m1.small\t0004 / 0008\t1\t256\t5');
    expect(h.clusters.node('127.0.12.11')?.nodeState).toBe('disabled');

    const services = await cli('describeServices', ['--filter-type', 'node']);
    expect(lines(services.stdout)).toEqual([
      'SERVICE\tnode\tcluster01\t127.0.12.11\tDISABLED',
      'SERVICE\tnode\tcluster01\t127.0.12.12\tENABLED',
      'SERVICE\tnode\tcluster02\t127.0.12.21\tENABLED',
      'SERVICE\tnode\tcluster02\t127.0.12.22\tENABLED',
    ]);

    const on = await cli('modifyService', ['-s', 'ENABLED', 'arn:euca:eucalyptus:cluster01:node:127.0.12.11/']);
    expect(lines(on.stdout)[0]).toBe('SERVICE\tnode\tcluster01\t127.0.12.11\tENABLED');
  });

  it('-p names the partition; an unknown host exits 1 with the code', async () => {
    const r = await cli('modifyService', ['-s', 'DISABLED', '127.0.12.11', '-p', 'cluster02']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^InvalidHost\.NotFound: No node 127\.0\.12\.11 is registered in partition cluster02\n$/);
    expect(h.clusters.mutatingCalls()).toEqual([]);
  });

  it('-s is required and limited to ENABLED/DISABLED', async () => {
    expect((await cli('modifyService', ['127.0.12.11'])).code).not.toBe(0);
    expect((await cli('modifyService', ['-s', 'BROKEN', '127.0.12.11'])).code).not.toBe(0);
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('euca-describe-availability-zones', () => {
  it('lists zones, and with verbose the matrix', async () => {
    expect(lines((await cli('describeAvailabilityZones', [])).stdout)).toEqual([
      'AVAILABILITYZONE\tcluster01\tavailable', 'AVAILABILITYZONE\tcluster02\tavailable',
    ]);
    const v = lines((await cli('describeAvailabilityZones', ['verbose', 'cluster02'])).stdout);
    expect(v.slice(0, 4)).toEqual([
      'AVAILABILITYZONE\tcluster02\tavailable',
      'AVAILABILITYZONE\t|- vm types\tfree / max\tcpu\tram\tdisk',
      'AVAILABILITYZONE\t|- t1.micro\t0008 / 0008\t1\t256\t5',
      'AVAILABILITYZONE\t|- m1.small\t0008 / 0008\t1\t256\t5',
    ]);
  });
});

describe('connection and wrappers', () => {
  it('an unreachable CLC is a clear message and exit 1', async () => {
    const r = await cli('describeNodes', [], { EC2_URL: closedUrl });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: cannot connect to the cloud controller at ${closedUrl}: ECONNREFUSED\n`);
  });

  it('--url overrides EC2_URL', async () => {
    const r = await cli('describeAvailabilityZones', ['--url', url], { EC2_URL: closedUrl });
    expect(r.code).toBe(0);
  });

  it('a path the CLC does not serve is its coded error', async () => {
    const r = await cli('describeNodes', [], { EC2_URL: url.replace(CLC_PATH, '/nothing') });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UnknownEndpoint: No service is served at \/nothing/);
  });

  it.each([
    'euca-describe-nodes', 'euca-describe-services', 'euca-describe-instances', 'euca-describe-availability-zones', 'euca-describe-migrations',
  ])('bin/%s runs the built command', async (name) => {
    const r = await cli(`bin/${name}`, []);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
