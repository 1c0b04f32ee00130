import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import express from 'express';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CC_ACCESS } from '../../../cc/server.js';
import { NC_ACCESS } from '../../../nc/server.js';
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';
import { silentLogger } from '../../../shared/log.js';
import { generateRsaKeys } from '../../../shared/pki/certificates.js';
import type { PeerRole } from '../../../shared/pki/spec.js';
import { HttpWireTransport } from '../../../shared/wire/httpTransport.js';
import {
  authorizePeer, checkSpeaksFor, mayCallAny, peerIdentityOf, requestLimits, SMALL_REQUEST, widestGrant, type AccessTable,
} from '../../../shared/wire/peerAuth.js';
import { mountWireService } from '../../../shared/wire/server.js';
import { issue, makeCa } from '../pki/fixtures.js';
import { peerNameOf, verifiedPeerCertificate } from '../../../shared/net/peerName.js';

describe('authorizePeer (the access tables)', () => {
  it.each([
    // [table, operation, caller role, allowed]
    ['cc', 'ccDescribeNodes', 'clc', true],
    ['cc', 'ccMigrateInstances', 'clc', true],
    ['cc', 'ccMigrateInstances', 'nc', false],
    ['cc', 'ccModifyNode', 'nc', false],
    ['cc', 'ccModifyNode', 'cc', false],
    ['cc', 'ccNodeEvent', 'nc', true],
    ['cc', 'ccNodeEvent', 'clc', false],
    ['cc', 'ccDescribeNodes', undefined, false],
    ['nc', 'ncDescribeResource', 'cc', true],
    ['nc', 'ncMigrateInstances', 'cc', true],
    ['nc', 'ncTerminateInstance', 'clc', false],
    ['nc', 'ncRunInstance', 'nc', false],
    ['nc', 'ncRunInstance', 'Cc', false],
    ['nc', 'notAnOperation', 'cc', false],
  ] as const)('%s table: %s by %s → allowed %s', (table, op, role, allowed) => {
    const t = table === 'cc' ? CC_ACCESS : NC_ACCESS;
    const err = authorizePeer(op, role, t);
    if (allowed) expect(err).toBeUndefined();
    else expect(err).toMatchObject({ code: 'PeerNotAuthorized', status: 403, clientFault: true });
  });

  it('refuses an operation or a role inherited from Object.prototype', () => {
    expect(authorizePeer('toString', 'cc', { x: { cc: { limits: SMALL_REQUEST } } })).toMatchObject({ code: 'PeerNotAuthorized' });
    expect(authorizePeer('x', 'constructor', { x: { cc: { limits: SMALL_REQUEST } } })).toMatchObject({ code: 'PeerNotAuthorized' });
  });

  it.each([
    ['cc', 'clc', true], ['cc', 'nc', true], ['cc', 'cc', false], ['cc', undefined, false],
    ['nc', 'cc', true], ['nc', 'clc', false], ['nc', 'nc', false],
  ] as const)('the %s table lets a %s certificate call something: %s', (table, role, any) => {
    expect(mayCallAny(role, table === 'cc' ? CC_ACCESS : NC_ACCESS)).toBe(any);
  });

  it('what a node may send the CC is small, and bound to its own host', () => {
    expect(CC_ACCESS.ccNodeEvent?.nc).toMatchObject({ speaksForHost: 'host', limits: { maxBytes: 4096, maxElements: 64 } });
    // Every other CC operation is the CLC's alone, and no NC operation binds a host.
    for (const [op, grants] of Object.entries(CC_ACCESS)) if (op !== 'ccNodeEvent') expect(Object.keys(grants), op).toEqual(['clc']);
    for (const grants of Object.values(NC_ACCESS)) expect(grants.cc?.speaksForHost).toBeUndefined();
  });

  it('a plaintext caller gets the widest grant of an operation and no host binding', () => {
    const table: AccessTable = { op: { clc: { limits: requestLimits(100, 5) }, nc: { limits: requestLimits(50, 9), speaksForHost: 'host' } } };
    expect(widestGrant('op', table)).toEqual({ limits: { ...requestLimits(100, 9), maxTextChars: 100 } });
    expect(widestGrant('other', table)).toBeUndefined();
  });
});

describe('checkSpeaksFor (the host binding)', () => {
  const grant = { limits: SMALL_REQUEST, speaksForHost: 'host' };
  it.each([
    ['its own host', { role: 'nc', host: '127.0.1.1' }, { host: '127.0.1.1' }, undefined],
    ['another host', { role: 'nc', host: '127.0.1.1' }, { host: '127.0.1.2' }, 'PeerHostMismatch'],
    ['no host field', { role: 'nc', host: '127.0.1.1' }, {}, 'PeerHostMismatch'],
    ['a host that is not a string', { role: 'nc', host: '127.0.1.1' }, { host: ['127.0.1.1'] }, 'PeerHostMismatch'],
    ['a certificate naming no single host', { role: 'nc', host: undefined }, { host: '127.0.1.1' }, 'PeerHostMismatch'],
  ] as const)('a node event naming %s → %s', (_n, peer, body, code) => {
    const err = checkSpeaksFor('ccNodeEvent', grant, peer, body as never);
    if (code === undefined) expect(err).toBeUndefined();
    else expect(err).toMatchObject({ code, status: 403, clientFault: true });
  });

  it('says who spoke for whom', () => {
    expect(checkSpeaksFor('ccNodeEvent', grant, { role: 'nc', host: '127.0.1.1' }, { host: '127.0.1.2' })?.message)
      .toBe('a nc certificate for 127.0.1.1 may not speak for host 127.0.1.2 in ccNodeEvent');
  });

  it('binds nothing when the grant does not speak for a host', () => {
    expect(checkSpeaksFor('ccModifyNode', { limits: SMALL_REQUEST }, { role: 'clc', host: '127.0.0.1' }, { host: '127.0.1.2' })).toBeUndefined();
  });
});

describe('peerIdentityOf', () => {
  const socket = (authorized: boolean, subject: Record<string, unknown>, subjectaltname?: string): Socket =>
    ({ authorized, getPeerCertificate: () => ({ subject, subjectaltname }) }) as unknown as Socket;
  it.each([
    ['a Ferry certificate', socket(true, { CN: '127.0.1.1', OU: 'nc' }, 'IP Address:127.0.1.1'), { role: 'nc', host: '127.0.1.1' }],
    ['a CN that is not its IP subjectAltName', socket(true, { CN: '127.0.1.1', OU: 'nc' }, 'IP Address:127.0.1.2'), { role: 'nc', host: undefined }],
    ['two IP subjectAltNames', socket(true, { CN: '127.0.1.1', OU: 'nc' }, 'IP Address:127.0.1.1, IP Address:127.0.1.2'), { role: 'nc', host: undefined }],
    ['no subjectAltName', socket(true, { CN: '127.0.1.1', OU: 'nc' }), { role: 'nc', host: undefined }],
    ['a repeated OU', socket(true, { CN: '127.0.1.1', OU: ['nc', 'clc'] }, 'IP Address:127.0.1.1'), undefined],
    ['an unverified certificate', socket(false, { CN: '127.0.1.1', OU: 'nc' }, 'IP Address:127.0.1.1'), undefined],
    ['plain TCP', {} as Socket, undefined],
    // Node answers null once the socket is gone (a clientError while it is destroyed).
    ['a socket already destroyed', { authorized: true, getPeerCertificate: () => null } as unknown as Socket, undefined],
  ])('%s', (_n, s, expected) => {
    expect(peerIdentityOf(s)).toEqual(expected);
  });

  it('peerNameOf falls back to the address when the certificate is gone, instead of throwing', () => {
    const gone = { authorized: true, remoteAddress: '127.0.1.9', getPeerCertificate: () => null } as unknown as Socket;
    expect(peerNameOf(gone)).toBe('127.0.1.9');
    const named = { authorized: true, remoteAddress: '127.0.1.9', getPeerCertificate: () => ({ subject: { OU: 'nc', CN: '127.0.1.1' } }) } as unknown as Socket;
    expect(peerNameOf(named)).toBe('nc 127.0.1.1');
  });

  it('reads a connection\'s certificate once (Node parses it anew on every call), and never remembers a missing one', () => {
    let reads = 0;
    let cert: unknown = null;
    const s = { authorized: true, remoteAddress: '127.0.1.9', getPeerCertificate: () => { reads++; return cert; } } as unknown as Socket;
    expect(verifiedPeerCertificate(s)).toBeUndefined();
    cert = { subject: { OU: 'nc', CN: '127.0.1.1' }, subjectaltname: 'IP Address:127.0.1.1' };
    for (let i = 0; i < 3; i++) {
      expect(peerNameOf(s)).toBe('nc 127.0.1.1');
      expect(peerIdentityOf(s)).toEqual({ role: 'nc', host: '127.0.1.1' });
    }
    expect(reads).toBe(2);
    const unverified = { authorized: false, getPeerCertificate: () => { reads++; return cert; } } as unknown as Socket;
    expect(verifiedPeerCertificate(unverified)).toBeUndefined();
    expect(reads).toBe(2);
  });
});

describe('mountWireService with an access table over mTLS', () => {
  const keys = generateRsaKeys();
  const now = new Date(); // the TLS stack checks validity against the real clock
  const ca = makeCa('wire', keys, now);
  const HOST = '127.0.5.7';
  const PATH = '/axis2/services/Test';
  const access: AccessTable = {
    forCc: { cc: { limits: SMALL_REQUEST } },
    forNcOrClc: { nc: { limits: SMALL_REQUEST }, clc: { limits: SMALL_REQUEST } },
    aboutMe: { nc: { limits: SMALL_REQUEST, speaksForHost: 'host' } },
  };
  const server = issue(ca, { role: 'cc', host: HOST }, keys, now);
  const caPem = forge.pki.certificateToPem(ca.cert);
  let srv: https.Server;
  let endpoint: string;
  const transports: HttpWireTransport[] = [];
  const seen: string[] = [];

  const as = (role: PeerRole, host = '127.0.0.1'): HttpWireTransport => {
    const c = issue(ca, { role, host }, keys, now);
    const t = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 3000, tls: { key: c.keyPem, cert: c.certPem, ca: caPem } });
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    const app = express();
    mountWireService(app, {
      path: PATH, logger: silentLogger(), access, checkPeers: true,
      handlers: {
        forCc: async () => ({ ok: 'cc' }),
        forNcOrClc: async () => ({ ok: 'other' }),
        aboutMe: async (body) => { seen.push(String(body.host)); return {}; },
        unlisted: async () => ({}),
      },
    });
    srv = https.createServer({ key: server.keyPem, cert: server.certPem, ca: caPem, requestCert: true, rejectUnauthorized: true }, app);
    await new Promise<void>((r) => srv.listen(0, HOST, r));
    endpoint = `https://${HOST}:${(srv.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const t of transports) t.close();
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  });

  async function outcome(t: HttpWireTransport, op: string, body = {}): Promise<string> {
    try {
      await t.call(endpoint, op, body);
      return 'ok';
    } catch (e) {
      if (!isFerryError(e)) throw e;
      const f = (e as FerryError).fields;
      return f.remoteCode === undefined ? `${e.code}: ${e.message}` : `${String(f.remoteCode)} ${String(f.remoteStatus)}`;
    }
  }

  it.each([
    ['cc', 'forCc', 'ok'],
    ['nc', 'forCc', 'PeerNotAuthorized 403'],
    ['clc', 'forCc', 'PeerNotAuthorized 403'],
    ['nc', 'forNcOrClc', 'ok'],
    ['clc', 'forNcOrClc', 'ok'],
    ['cc', 'forNcOrClc', 'PeerNotAuthorized 403'],
    ['cc', 'unlisted', 'PeerNotAuthorized 403'],
    ['cc', 'missing', 'UnknownOperation 400'],
  ] as const)('a %s certificate calling %s → %s', async (role, op, expected) => {
    expect(await outcome(as(role), op)).toBe(expected);
  });

  it('binds a message that speaks for a host to the host of the certificate', async () => {
    const node = as('nc', '127.0.1.1');
    expect(await outcome(node, 'aboutMe', { host: '127.0.1.1' })).toBe('ok');
    expect(await outcome(node, 'aboutMe', { host: '127.0.1.2' })).toBe('PeerHostMismatch 403');
    expect(await outcome(node, 'aboutMe', {})).toBe('PeerHostMismatch 403');
    expect(seen).toEqual(['127.0.1.1']);
  });
});
