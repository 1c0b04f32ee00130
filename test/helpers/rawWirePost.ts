/**
 * A tier request written by hand on a raw TLS socket (tls.connect), so that it can stop half-way:
 * what the wire-hardening tests use to show that a refusal comes before (or while) a body is sent.
 * Works for both encodings: the Content-Type says which; the answer's code is read from either.
 */
import tls from 'node:tls';
import type { PeerRole } from '../../shared/pki/spec.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';

export interface RawAnswer {
  /** HTTP status, 0 when none came before the deadline. */
  readonly status: number;
  /** The Fault's code, '' for a success or no answer. */
  readonly code: string;
  /** Bytes of the body written before the answer arrived. */
  readonly bodyBytesSent: number;
  /** Whether the server closed the connection after answering (within the deadline). */
  readonly closedByServer: boolean;
}

export interface RawRequest {
  readonly role: PeerRole;
  readonly host: string;
  /** https://HOST:PORT of the daemon. */
  readonly url: string;
  readonly path: string;
  /** SOAPAction's operation; undefined sends no SOAPAction. */
  readonly operation: string | undefined;
  /** Default: text/xml; charset=utf-8. */
  readonly contentType?: string;
  /** The body's first bytes: sent at once after the headers. */
  readonly start: Buffer;
  /** Content-Length to declare; undefined: chunked, with `chunks` more chunks of `filler` sent one by one. */
  readonly declared?: number;
  readonly chunks?: number;
  readonly filler?: Buffer;
  /** After the answer, wait for the server to close (default); false: return at once. */
  readonly awaitClose?: boolean;
}

/** A whole answer, in XML (`</Fault>`) or JSON (`{"Fault":{...}}`). */
const ANSWERED = /<\/(Fault|\w+Response)>|^\{"(Fault|\w+Response)":\{.*\}\}$/s;
const CODE = /<code>([^<]*)<\/code>|"code":"([^"]*)"/;

/**
 * Writes the headers and `start` (and, chunked, up to `chunks` filler chunks, one per write, stopping
 * at the first answer), then waits up to 10 s for an answer and up to 5 s more for the server to
 * close. Never sends the rest of a declared body.
 */
export function rawWirePost(certsDir: string, r: RawRequest): Promise<RawAnswer> {
  const id = loadTlsIdentity(certsDir, r.role, r.host);
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
      const m = CODE.exec(received);
      resolve({ status, code: m?.[1] ?? m?.[2] ?? '', bodyBytesSent: sent, closedByServer: closed });
    };
    let deadline = setTimeout(() => finish(false), 10_000);
    socket.on('error', (e: NodeJS.ErrnoException) => (answered ? finish(true) : reject(e)));
    socket.on('close', () => finish(answered));
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      const head = received.indexOf('\r\n\r\n');
      if (!answered && m && head >= 0 && ANSWERED.test(received.slice(head + 4).trim())) {
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
        `POST ${r.path} HTTP/1.1`, `Host: ${u.host}`, `Content-Type: ${r.contentType ?? 'text/xml; charset=utf-8'}`,
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
        if (answered || left-- <= 0 || socket.destroyed || !r.filler) return;
        chunk(r.filler);
        setImmediate(more);
      };
      more();
    });
  });
}
