import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CC_ALLOWED_ROLES } from '../../../cc/server.js';
import { NC_ALLOWED_ROLES } from '../../../nc/server.js';
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';
import { silentLogger } from '../../../shared/log.js';
import { generateRsaKeys } from '../../../shared/pki/certificates.js';
import type { PeerRole } from '../../../shared/pki/spec.js';
import { HttpWireTransport } from '../../../shared/wire/httpTransport.js';
import { authorizePeer, type AllowedRoles } from '../../../shared/wire/peerAuth.js';
import { mountWireService } from '../../../shared/wire/server.js';
import { issue, makeCa } from '../pki/fixtures.js';

describe('authorizePeer (the role table)', () => {
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
    const t = table === 'cc' ? CC_ALLOWED_ROLES : NC_ALLOWED_ROLES;
    const err = authorizePeer(op, role, t);
    if (allowed) expect(err).toBeUndefined();
    else expect(err).toMatchObject({ code: 'PeerNotAuthorized', status: 403, clientFault: true });
  });

  it('refuses an operation inherited from Object.prototype', () => {
    expect(authorizePeer('toString', 'cc', { x: ['cc'] })).toMatchObject({ code: 'PeerNotAuthorized' });
  });
});

describe('mountWireService with allowedRoles over mTLS', () => {
  const keys = generateRsaKeys();
  const now = new Date(); // the TLS stack checks validity against the real clock
  const ca = makeCa('wire', keys, now);
  const HOST = '127.0.5.7';
  const PATH = '/axis2/services/Test';
  const allowed: AllowedRoles = { forCc: ['cc'], forNcOrClc: ['nc', 'clc'] };
  const server = issue(ca, { role: 'cc', host: HOST }, keys, now);
  const caPem = forge.pki.certificateToPem(ca.cert);
  let srv: https.Server;
  let endpoint: string;
  const transports: HttpWireTransport[] = [];

  const as = (role: PeerRole): HttpWireTransport => {
    const c = issue(ca, { role, host: '127.0.0.1' }, keys, now);
    const t = new HttpWireTransport({ path: PATH, defaultTimeoutMs: 3000, tls: { key: c.keyPem, cert: c.certPem, ca: caPem } });
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    const app = express();
    mountWireService(app, {
      path: PATH, logger: silentLogger(), allowedRoles: allowed,
      handlers: { forCc: async () => ({ ok: 'cc' }), forNcOrClc: async () => ({ ok: 'other' }), unlisted: async () => ({}) },
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

  async function outcome(role: PeerRole, op: string): Promise<string> {
    try {
      await as(role).call(endpoint, op, {});
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
    expect(await outcome(role, op)).toBe(expected);
  });
});
