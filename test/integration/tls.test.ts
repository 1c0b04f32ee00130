/**
 * Mutual TLS between every tier with real processes on 127.0.22.0/24: the cloud layout's own PKI
 * (certs/ in the cloud's temp dir), two simhv + NC pairs, a CC and a CLC, all started without any
 * TLS flag of the test's own. Calls work with the right certificate; no certificate, a foreign CA's
 * certificate or plain HTTP never reach a handler; a certificate of the wrong role gets a coded
 * PeerNotAuthorized. A second, plaintext CLC (127.0.22.253) shows the CC refuses a CLC without one.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import xml2js from 'xml2js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { isFerryError, type FerryError } from '../../shared/errors/registry.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../../shared/wire/tls.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';
import { ROOT, TestCloud } from '../helpers/cloud.js';

const cloud = new TestCloud(22, 2, { ccArgs: ['--poll-interval-ms', '500'] });
const CTRL = cloud.controller;
const [NC1, NC2] = cloud.nodeHosts as [string, string];
const CC_URL = cloud.ccUrl;
const foreign = join(cloud.baseDir, 'foreign');
/** A CLC with no certificate: plain HTTP to the CC's TLS port. */
const PLAIN_CLC = '127.0.22.253';
const plainClcUrl = `http://${PLAIN_CLC}:8773/services/Eucalyptus`;
let plainClc: RunningDaemon | undefined;
const transports: HttpWireTransport[] = [];

/** A client of `path` presenting the given TLS settings (none: plain http). */
function client(path: string, tls: ConstructorParameters<typeof HttpWireTransport>[0]['tls']): HttpWireTransport {
  const t = new HttpWireTransport({ path, defaultTimeoutMs: 3000, ...(tls ? { tls } : {}) });
  transports.push(t);
  return t;
}

async function failure(p: Promise<WireObject>): Promise<FerryError> {
  try {
    await p;
  } catch (e) {
    if (isFerryError(e)) return e;
    throw e;
  }
  throw new Error('call succeeded but should have failed');
}

function arr<T>(x: T | T[] | undefined | ''): T[] {
  return x === undefined || x === '' ? [] : Array.isArray(x) ? x : [x];
}

/** DescribeNodes through the CLC until both nodes are reachable (the CC's first polls), or the deadline. */
async function describeNodesViaClc(): Promise<{ status: number; nodes: { host: string; state: string }[] }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await cloud.query({ Action: 'DescribeNodes' });
    const nodes = r.status === 200 ? arr<{ host: string; state: string }>((r.doc.DescribeNodesResponse as any).nodeSet?.item) : [];
    if ((nodes.length === 2 && nodes.every((n) => n.state === 'ENABLED')) || Date.now() > deadline) return { status: r.status, nodes };
    await new Promise((r2) => setTimeout(r2, 200));
  }
}

beforeAll(async () => {
  // A second cloud's PKI, through the ferry-init command: its certificates must get nowhere here.
  execFileSync(process.execPath, [join(ROOT, 'dist/scripts/ferry-init.js'), '--dir', foreign, '--cloud-id', 'someone-else',
    '--clc', CTRL, '--cc', `cluster01=${CTRL}`, '--nc', cloud.nodeHosts.join(',')], { stdio: 'pipe' });
  await cloud.start();
  plainClc = await spawnDaemon({
    name: 'clc-plaintext', entry: 'dist/clc/main.js', ready: 'clc listening on',
    args: ['--host', PLAIN_CLC, '--port', '8773', '--state-dir', join(cloud.baseDir, 'clc-plaintext'), '--auth', 'none',
      '--cc-timeout-ms', '2000', '--clusters', `cluster01=http://${CTRL}:8774`, '--insecure-plaintext'],
  }, { root: ROOT, logFile: join(cloud.baseDir, 'logs', 'clc-plaintext.log') });
});

afterAll(async () => {
  for (const t of transports) t.close();
  if (plainClc) await stopPid(plainClc.pid);
  await cloud.destroy();
});

describe('every tier over mutual TLS by default', () => {
  it('the layout started every tier on https, with no plaintext warning', () => {
    for (const name of ['cc', `nc-${NC1}`, `nc-${NC2}`]) expect(cloud.log(name)).toMatch(/listening on https:\/\//);
    for (const name of cloud.names()) expect(cloud.log(name)).not.toContain('PLAINTEXT');
  });

  it('DescribeNodes through the CLC works end to end: CLC → CC → NCs, each hop mutual TLS', async () => {
    const { status, nodes } = await describeNodesViaClc();
    expect(status).toBe(200);
    expect(nodes.map((n) => [n.host, n.state]).sort()).toEqual([[NC1, 'ENABLED'], [NC2, 'ENABLED']]);
  });

  it('the CC reaches both NCs over mTLS (ccDescribeNodes as the CLC)', async () => {
    const r = await cloud.tierClient(CC_PATH).call(CC_URL, 'ccDescribeNodes', {});
    const nodes = arr(r.nodes as WireObject[] | WireObject | undefined) as { host: string; reachable: boolean }[];
    expect(nodes.map((n) => [n.host, n.reachable]).sort()).toEqual([[NC1, true], [NC2, true]]);
  });

  it('lets an NC certificate deliver ccNodeEvent (the NC→CC direction)', async () => {
    await expect(cloud.tierClient(CC_PATH, 'nc', NC1).call(CC_URL, 'ccNodeEvent', { host: NC1, kind: 'node' })).resolves.toEqual({});
  });

  it.each([
    ['ccDescribeNodes', {}],
    ['ccDescribeInstances', {}],
    ['ccModifyNode', { host: NC1, stateName: 'disabled' }],
    ['ccMigrateInstances', { sourceHost: NC1 }],
  ])('answers an NC certificate calling the CLC-only %s with a coded 403 PeerNotAuthorized, changing nothing', async (op, body) => {
    const err = await failure(cloud.tierClient(CC_PATH, 'nc', NC1).call(CC_URL, op, body));
    expect(err.code).toBe('RemoteFault');
    expect(err.fields).toMatchObject({ remoteCode: 'PeerNotAuthorized', remoteStatus: 403 });
    const { nodes } = await describeNodesViaClc();
    expect(nodes.map((n) => n.state)).toEqual(['ENABLED', 'ENABLED']);
  });

  it('answers a CLC certificate calling an NC directly with PeerNotAuthorized', async () => {
    const err = await failure(cloud.tierClient(NC_PATH).call(cloud.ncUrl(NC1), 'ncDescribeResource', {}));
    expect(err.fields).toMatchObject({ remoteCode: 'PeerNotAuthorized', remoteStatus: 403 });
  });

  it('refuses a CLC without a certificate: the plaintext CLC gets no answer from the CC and reports the partition unavailable', async () => {
    expect(cloud.log('clc-plaintext')).toMatch(/WARNING.*PLAINTEXT/);
    const res = await fetch(plainClcUrl, { method: 'POST', body: new URLSearchParams({ Action: 'DescribeNodes', Version: '2013-02-01' }) });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const body = ((await xml2js.parseStringPromise(text, { explicitArray: false })) as { DescribeNodesResponse: Record<string, any> }).DescribeNodesResponse;
    expect(arr(body.nodeSet?.item)).toEqual([]);
    const unavailable = arr<{ partition: string; reason: string }>(body.unavailablePartitionSet?.item);
    expect(unavailable.map((u) => u.partition)).toEqual(['cluster01']);
    expect(unavailable[0]?.reason).toMatch(/cluster controller of partition cluster01 is unreachable/);
  });

  it('refuses a client without a certificate at the TLS layer', async () => {
    const anonymous = client(CC_PATH, { ca: loadTlsIdentity(cloud.certsDir, 'clc', CTRL).ca });
    const err = await failure(anonymous.call(CC_URL, 'ccDescribeNodes', {}));
    expect(err.code).toBe('PeerUnreachable');
  });

  it('refuses a certificate from a foreign CA at the TLS layer', async () => {
    const stranger = loadTlsIdentity(foreign, 'clc', CTRL);
    const ours = loadTlsIdentity(cloud.certsDir, 'clc', CTRL);
    // It trusts our CA (so the server is accepted) but presents a certificate our CA never signed.
    const err = await failure(client(CC_PATH, { ...clientTlsOptions(stranger), ca: ours.ca }).call(CC_URL, 'ccDescribeNodes', {}));
    expect(err.code).toBe('PeerUnreachable');
  });

  it('refuses a server whose certificate comes from a foreign CA', async () => {
    const trustsForeignOnly = client(CC_PATH, clientTlsOptions(loadTlsIdentity(foreign, 'clc', CTRL)));
    const err = await failure(trustsForeignOnly.call(CC_URL, 'ccDescribeNodes', {}));
    expect(err.code).toBe('PeerUnreachable');
  });

  it('does not answer plain HTTP on the TLS port', async () => {
    const plain = client(CC_PATH, undefined);
    const err = await failure(plain.call(`http://${CTRL}:8774`, 'ccDescribeNodes', {}));
    expect(['PeerUnreachable', 'PeerProtocolError']).toContain(err.code);
  });
});
