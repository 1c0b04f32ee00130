/**
 * Mutual TLS between CC and NC with real processes on 127.0.22.0/24: ferry-init writes a PKI into a
 * temp dir; two simhv + NC pairs and a CC start with --tls-dir. Calls work with the right
 * certificate; no certificate, a foreign CA's certificate or plain HTTP never reach a handler; a
 * certificate of the wrong role gets a coded PeerNotAuthorized.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessSpec } from '../../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../../scripts/daemon.js';
import { isFerryError, type FerryError } from '../../shared/errors/registry.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../../shared/wire/tls.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import type { WireObject } from '../../shared/wire/xmlCodec.js';
import { ROOT } from '../helpers/cloud.js';

const CTRL = '127.0.22.254';
const NODES = ['127.0.22.1', '127.0.22.2'] as const;
const CC_URL = `https://${CTRL}:8774`;
const base = mkdtempSync(join(tmpdir(), 'ferry-tls-'));
const certs = join(base, 'certs');
const foreign = join(base, 'foreign');
const running: RunningDaemon[] = [];
const transports: HttpWireTransport[] = [];

function ferryInit(dir: string, cloudId: string): void {
  execFileSync(process.execPath, [join(ROOT, 'dist/scripts/ferry-init.js'), '--dir', dir, '--cloud-id', cloudId,
    '--clc', CTRL, '--cc', `cluster01=${CTRL}`, '--nc', NODES.join(',')], { stdio: 'pipe' });
}

function specs(): ProcessSpec[] {
  const out: ProcessSpec[] = [];
  for (const host of NODES) {
    out.push({
      name: `simhv-${host}`, entry: 'dist/nc/hypervisor/sim/main.js', ready: 'simhv listening on',
      args: ['--host', host, '--port', '16509', '--state-dir', join(base, host, 'simhv'), '--storage-dir', join(base, 'storage')],
    });
    out.push({
      name: `nc-${host}`, entry: 'dist/nc/main.js', ready: 'nc listening on https://',
      args: ['--host', host, '--port', '8775', '--state-dir', join(base, host, 'nc'), '--sim-url', `http://${host}:16509`,
        '--cc-url', CC_URL, '--tls-dir', certs],
    });
  }
  out.push({
    name: 'cc', entry: 'dist/cc/main.js', ready: 'cc listening on https://',
    args: ['--host', CTRL, '--port', '8774', '--partition', 'cluster01', '--nodes', NODES.join(','), '--nc-port', '8775',
      '--state-dir', join(base, 'cc'), '--poll-interval-ms', '500', '--tls-dir', certs],
  });
  return out;
}

/** A client of `path` presenting the given TLS settings (none: plain https with only the CA). */
function client(path: string, tls: ConstructorParameters<typeof HttpWireTransport>[0]['tls']): HttpWireTransport {
  const t = new HttpWireTransport({ path, defaultTimeoutMs: 3000, ...(tls ? { tls } : {}) });
  transports.push(t);
  return t;
}

const asClc = (): HttpWireTransport => client(CC_PATH, clientTlsOptions(loadTlsIdentity(certs, 'clc', CTRL)));
const asNcToCc = (): HttpWireTransport => client(CC_PATH, clientTlsOptions(loadTlsIdentity(certs, 'nc', NODES[0])));

async function failure(p: Promise<WireObject>): Promise<FerryError> {
  try {
    await p;
  } catch (e) {
    if (isFerryError(e)) return e;
    throw e;
  }
  throw new Error('call succeeded but should have failed');
}

beforeAll(async () => {
  ferryInit(certs, 'ferry-tls');
  ferryInit(foreign, 'someone-else');
  for (const spec of specs()) {
    running.push(await spawnDaemon(spec, { root: ROOT, logFile: join(base, 'logs', `${spec.name}.log`) }));
  }
});

afterAll(async () => {
  for (const t of transports) t.close();
  for (const d of running.reverse()) await stopPid(d.pid);
  rmSync(base, { recursive: true, force: true });
});

describe('CC and NC over mutual TLS', () => {
  it('serves the CLC over mTLS and reaches both NCs over mTLS', async () => {
    const clc = asClc();
    const deadline = Date.now() + 15_000;
    let nodes: { host: string; reachable: boolean }[] = [];
    while (Date.now() < deadline) {
      const r = await clc.call(CC_URL, 'ccDescribeNodes', {});
      nodes = ([] as unknown[]).concat(r.nodes ?? []) as { host: string; reachable: boolean }[];
      if (nodes.length === 2 && nodes.every((n) => n.reachable === true)) break;
      await new Promise((r2) => setTimeout(r2, 200));
    }
    expect(nodes.map((n) => [n.host, n.reachable]).sort()).toEqual([[NODES[0], true], [NODES[1], true]]);
  });

  it('lets an NC certificate deliver ccNodeEvent (the NC→CC direction)', async () => {
    await expect(asNcToCc().call(CC_URL, 'ccNodeEvent', { host: NODES[0], kind: 'node' })).resolves.toEqual({});
  });

  it('answers an NC certificate calling a CLC-only operation with a coded 403 PeerNotAuthorized', async () => {
    const err = await failure(asNcToCc().call(CC_URL, 'ccMigrateInstances', { sourceHost: NODES[0] }));
    expect(err.code).toBe('RemoteFault');
    expect(err.fields).toMatchObject({ remoteCode: 'PeerNotAuthorized', remoteStatus: 403 });
  });

  it('answers a CLC certificate calling an NC directly with PeerNotAuthorized', async () => {
    const clcToNc = client(NC_PATH, clientTlsOptions(loadTlsIdentity(certs, 'clc', CTRL)));
    const err = await failure(clcToNc.call(`https://${NODES[0]}:8775`, 'ncDescribeResource', {}));
    expect(err.fields).toMatchObject({ remoteCode: 'PeerNotAuthorized', remoteStatus: 403 });
  });

  it('refuses a client without a certificate at the TLS layer', async () => {
    const anonymous = client(CC_PATH, { ca: loadTlsIdentity(certs, 'clc', CTRL).ca });
    const err = await failure(anonymous.call(CC_URL, 'ccDescribeNodes', {}));
    expect(err.code).toBe('PeerUnreachable');
  });

  it('refuses a certificate from a foreign CA at the TLS layer', async () => {
    const stranger = loadTlsIdentity(foreign, 'clc', CTRL);
    const ours = loadTlsIdentity(certs, 'clc', CTRL);
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
