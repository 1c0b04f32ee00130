/**
 * Issue 16, items 2 and 3, against real daemons on 127.0.49.0/24 (two simhv + NC pairs, a CC and a
 * CLC, mutual TLS with the layout's PKI):
 *  - a caller whose certificate may not call an operation is refused before its body is read: the
 *    coded answer arrives while the client has sent 1 KiB of a declared 1 MiB, and the server then
 *    closes the connection instead of waiting for the rest;
 *  - a caller that may call it is held to that operation's size, also before or while it sends;
 *  - the operation named before the body (SOAPAction) must be the body's;
 *  - a node's certificate cannot speak for another host (ccNodeEvent, the one operation a node calls).
 * Clients here are raw TLS sockets (tls.connect) so that a request can stop half-way.
 */
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerRole } from '../../shared/pki/spec.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { CC_PATH, NC_PATH } from '../../shared/wire/transport.js';
import { encodeMessage, type WireObject } from '../../shared/wire/xmlCodec.js';
import { TestCloud } from '../helpers/cloud.js';

const cloud = new TestCloud(49, 2, { ccArgs: ['--poll-interval-ms', '500'] });
const [NC1, NC2] = cloud.nodeHosts as [string, string];
const MiB = 1024 * 1024;

interface RawAnswer {
  /** HTTP status, 0 when none came before the deadline. */
  readonly status: number;
  /** The Fault's code, '' for a success or no answer. */
  readonly code: string;
  /** Bytes of the body written before the answer arrived. */
  readonly bodyBytesSent: number;
  /** Whether the server closed the connection after answering (within the deadline). */
  readonly closedByServer: boolean;
}

interface RawRequest {
  readonly role: PeerRole;
  readonly host: string;
  /** https://HOST:PORT of the daemon. */
  readonly url: string;
  readonly path: string;
  /** SOAPAction's operation; undefined sends no SOAPAction. */
  readonly operation: string | undefined;
  /** The body's first bytes: sent at once after the headers. */
  readonly start: Buffer;
  /** Content-Length to declare; undefined: chunked, with `chunks` more chunks of filler sent one by one. */
  readonly declared?: number;
  readonly chunks?: number;
  /** After the answer, wait for the server to close (default); false: return at once. */
  readonly awaitClose?: boolean;
}

/** Array items, to make a body as large as wanted. */
const FILLER = Buffer.from('<item t="z"/>'.repeat(100));

/**
 * Writes the headers and `start` (and, chunked, up to `chunks` filler chunks, one per write, stopping
 * at the first answer), then waits up to 10 s for an answer and up to 5 s more for the server to
 * close. Never sends the rest of a declared body.
 */
function rawPost(r: RawRequest): Promise<RawAnswer> {
  const id = loadTlsIdentity(cloud.certsDir, r.role, r.host);
  const u = new URL(r.url);
  return new Promise((resolve, reject) => {
    let received = '';
    let sent = 0;
    let answered = false;
    let status = 0;
    const socket = tls.connect({ host: u.hostname, port: Number(u.port), key: id.key, cert: id.cert, ca: id.ca });
    const finish = (closed: boolean): void => {
      clearTimeout(deadline);
      socket.destroy();
      const code = /<code>([^<]*)<\/code>/.exec(received)?.[1] ?? '';
      resolve({ status, code, bodyBytesSent: sent, closedByServer: closed });
    };
    let deadline = setTimeout(() => finish(false), 10_000);
    socket.on('error', (e: NodeJS.ErrnoException) => (answered ? finish(true) : reject(e)));
    socket.on('close', () => finish(answered));
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (!answered && m && received.includes('\r\n\r\n') && /<\/(Fault|\w+Response)>/.test(received)) {
        answered = true;
        status = Number(m[1]);
        if (r.awaitClose === false) return finish(false);
        // The server has answered; now see whether it closes without the rest of the body.
        clearTimeout(deadline);
        deadline = setTimeout(() => finish(false), 5_000);
      }
    });
    socket.once('secureConnect', () => {
      const headers = [
        `POST ${r.path} HTTP/1.1`, `Host: ${u.host}`, 'Content-Type: text/xml; charset=utf-8',
        ...(r.operation !== undefined ? [`SOAPAction: "urn:ferry:wire:1#${r.operation}"`] : []),
        r.declared !== undefined ? `Content-Length: ${r.declared}` : 'Transfer-Encoding: chunked',
      ];
      socket.write(`${headers.join('\r\n')}\r\n\r\n`);
      if (r.declared !== undefined) {
        socket.write(r.start);
        sent = r.start.length;
        return;
      }
      const chunk = (b: Buffer): void => {
        socket.write(`${b.length.toString(16)}\r\n`);
        socket.write(b);
        socket.write('\r\n');
        sent += b.length;
      };
      chunk(r.start);
      let left = r.chunks ?? 0;
      const more = (): void => {
        if (answered || left-- <= 0 || socket.destroyed) return;
        chunk(FILLER);
        setImmediate(more);
      };
      more();
    });
  });
}

const opening = (operation: string): Buffer => Buffer.concat([Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><${operation} xmlns="urn:ferry:wire:1"><pad t="a">`), FILLER]);

/** A complete message, sent whole with Content-Length. */
const whole = (operation: string, body: WireObject): { start: Buffer; declared: number } => {
  const start = Buffer.from(encodeMessage(operation, body));
  return { start, declared: start.length };
};

async function nodeStates(): Promise<string[]> {
  const r = await cloud.tierClient(CC_PATH).call(cloud.ccUrl, 'ccDescribeNodes', {});
  return (r.nodes as { host: string; nodeState: string }[]).map((n) => `${n.host}=${n.nodeState}`).sort();
}

beforeAll(async () => {
  await cloud.start();
});

afterAll(async () => {
  await cloud.destroy();
});

describe('a caller is refused before its body is read', () => {
  it('an NC certificate sending 1 MiB to a CLC-only CC operation gets a coded 403 after 1 KiB, and the CC closes the connection', async () => {
    const start = opening('ccDescribeNodes');
    const a = await rawPost({ role: 'nc', host: NC1, url: cloud.ccUrl, path: CC_PATH, operation: 'ccDescribeNodes', start, declared: MiB });
    expect(a).toEqual({ status: 403, code: 'PeerNotAuthorized', bodyBytesSent: start.length, closedByServer: true });
  });

  it('a CLC certificate, allowed nothing on an NC, is refused whatever it names, with no byte of body sent', async () => {
    const a = await rawPost({ role: 'clc', host: cloud.controller, url: cloud.ncUrl(NC1), path: NC_PATH, operation: 'ncAnything', start: Buffer.alloc(0), declared: MiB });
    expect(a).toEqual({ status: 403, code: 'PeerNotAuthorized', bodyBytesSent: 0, closedByServer: true });
  });

  it('an NC certificate declaring 1 MiB for ccNodeEvent (its own operation) gets 413 before sending it', async () => {
    const start = opening('ccNodeEvent');
    const a = await rawPost({ role: 'nc', host: NC1, url: cloud.ccUrl, path: CC_PATH, operation: 'ccNodeEvent', start, declared: MiB });
    expect(a).toEqual({ status: 413, code: 'RequestTooLarge', bodyBytesSent: start.length, closedByServer: true });
  });

  it('an NC certificate streaming a chunked ccNodeEvent is cut off at its 4 KiB, long before 1 MiB', async () => {
    const a = await rawPost({ role: 'nc', host: NC1, url: cloud.ccUrl, path: CC_PATH, operation: 'ccNodeEvent', start: opening('ccNodeEvent'), chunks: MiB / FILLER.length });
    expect(a.status).toBe(413);
    expect(['RequestTooLarge', 'XmlLimitExceeded']).toContain(a.code);
    expect(a.closedByServer).toBe(true);
    expect(a.bodyBytesSent).toBeLessThan(MiB / 4);
  });

  it('a request without SOAPAction is refused before its body, with a code that says what to send', async () => {
    const a = await rawPost({ role: 'clc', host: cloud.controller, url: cloud.ccUrl, path: CC_PATH, operation: undefined, start: opening('ccDescribeNodes'), declared: MiB });
    expect(a).toMatchObject({ status: 400, code: 'OperationHeaderMissing', closedByServer: true });
  });

  it('a body naming another operation than its SOAPAction is refused (an NC cannot smuggle ccModifyNode under ccNodeEvent)', async () => {
    const before = await nodeStates();
    const msg = whole('ccModifyNode', { host: NC1, stateName: 'disabled', vmTypes: [{ name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 }] });
    const a = await rawPost({ role: 'nc', host: NC1, url: cloud.ccUrl, path: CC_PATH, operation: 'ccNodeEvent', ...msg, awaitClose: false });
    expect(a).toMatchObject({ status: 400, code: 'OperationMismatch' });
    expect(await nodeStates()).toEqual(before);
  });

  it('a legitimate call sent the same way still works on the same CC', async () => {
    const a = await rawPost({ role: 'clc', host: cloud.controller, url: cloud.ccUrl, path: CC_PATH, operation: 'ccDescribeInstances', ...whole('ccDescribeInstances', {}), awaitClose: false });
    expect(a).toMatchObject({ status: 200, code: '' });
  });
});

describe('a node certificate cannot speak for another host', () => {
  it.each(['node', 'instance', 'migration'] as const)('ccNodeEvent (kind %s) from NC1 naming NC2 is refused with 403 PeerHostMismatch', async (kind) => {
    const event = { host: NC2, kind, ...(kind === 'migration' ? { migrationId: 'mig-0000abcd' } : {}), ...(kind === 'instance' ? { instanceId: 'i-0000abcd' } : {}) };
    const err = await cloud.tierClient(CC_PATH, 'nc', NC1).call(cloud.ccUrl, 'ccNodeEvent', event).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'RemoteFault', fields: { remoteCode: 'PeerHostMismatch', remoteStatus: 403 } });
    expect((err as Error).message).toContain(`a nc certificate for ${NC1} may not speak for host ${NC2} in ccNodeEvent`);
  });

  it('ccNodeEvent from NC2 naming NC2 is accepted', async () => {
    await expect(cloud.tierClient(CC_PATH, 'nc', NC2).call(cloud.ccUrl, 'ccNodeEvent', { host: NC2, kind: 'node' })).resolves.toEqual({});
  });

  it('the NCs\' own events still reach the CC: both nodes stay reachable and enabled', async () => {
    expect(await nodeStates()).toEqual([`${NC1}=enabled`, `${NC2}=enabled`]);
    for (const h of [NC1, NC2]) expect(cloud.log(`nc-${h}`)).not.toContain('PeerHostMismatch');
  });
});
