/**
 * A raw client of a simhv's TLS migration port, for real-process credential tests: it opens the
 * incoming stream of one migration item presenting any credential (or none) and reports how the
 * destination answered — a coded refusal, or a refused handshake. It trusts the migration CA and
 * skips the item binding (it is not a migration source): the destination's checks are under test.
 */
import { request } from 'node:https';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';

export interface StreamAnswer {
  readonly status?: number;
  readonly code?: string;
  readonly reason?: string;
  /** A socket or TLS error: the handshake itself was refused. */
  readonly socketError?: string;
}

export interface StreamTarget {
  /** The destination host and its TLS migration port. */
  readonly host: string;
  readonly port: number;
  /** The migration CA's certificate (public): the client checks the server against it. */
  readonly caPem: string;
  readonly instanceId: string;
  /** The hypervisor's migration id, `<migrationId>-<instanceId>`. */
  readonly key: string;
}

/** Opens the incoming stream of `t`'s item presenting `cred`; `path` and `servername` default to the item's. */
export function openStream(
  t: StreamTarget, cred: MigrationCredential | 'none', path = `/v1/incoming/${t.instanceId}/${t.key}/stream`, servername = t.instanceId,
): Promise<StreamAnswer> {
  return new Promise((resolve) => {
    const tls = cred === 'none' ? { ca: t.caPem } : { key: cred.keyPem, cert: cred.certPem, ca: t.caPem };
    const req = request({
      host: t.host, port: t.port, path, method: 'POST', servername, agent: false, rejectUnauthorized: true, ...tls,
      checkServerIdentity: () => undefined,
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const error = (JSON.parse(body) as { error?: { code: string; fields?: { reason?: string } } }).error;
        resolve({ status: res.statusCode, ...(error ? { code: error.code, reason: error.fields?.reason } : {}) });
      });
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ socketError: e.code ?? e.message }));
    req.end();
  });
}
