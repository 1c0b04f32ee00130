/**
 * The few bytes a migration tunnel speaks before it carries QEMU's stream (pure; docs/libvirt.md).
 * After the mutual TLS handshake the source sends one line, `{"v":1,"port":P}`: the port its QEMU
 * was told to use, which the destination's QEMU listens on at the destination's local address. The
 * destination answers one line, `{"ok":true}` or `{"ok":false,"reason":...,"detail":...}` (a
 * PeerRefusal or `port`), and from then on the connection carries QEMU's bytes unchanged.
 */
import type { PeerRefusal } from '../../../shared/pki/migrationPeer.js';

export const TUNNEL_VERSION = 1;
/** Longest header line either side accepts: anything longer is not this protocol. */
export const MAX_LINE_BYTES = 512;

export interface PortRange {
  readonly min: number;
  readonly max: number;
}

export type TunnelRefusal = PeerRefusal | 'port' | 'protocol';

export type TunnelAnswer =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: TunnelRefusal; readonly detail: string };

export function encodeHello(port: number): string {
  return `${JSON.stringify({ v: TUNNEL_VERSION, port })}\n`;
}

/** The port a source's hello names, or a refusal when the line is not a hello within `range`. */
export function decodeHello(line: string, range: PortRange): { port: number } | TunnelAnswer & { ok: false } {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'protocol', detail: 'the hello is not JSON' };
  }
  const o = v as { v?: unknown; port?: unknown };
  if (typeof v !== 'object' || v === null || o.v !== TUNNEL_VERSION || !Number.isInteger(o.port)) {
    return { ok: false, reason: 'protocol', detail: `not a version ${TUNNEL_VERSION} hello` };
  }
  const port = o.port as number;
  if (port < range.min || port > range.max) {
    return { ok: false, reason: 'port', detail: `port ${port} is outside the migration data ports ${range.min}-${range.max}` };
  }
  return { port };
}

export function encodeAnswer(a: TunnelAnswer): string {
  return `${JSON.stringify(a)}\n`;
}

export function decodeAnswer(line: string): TunnelAnswer {
  try {
    const v = JSON.parse(line) as { ok?: unknown; reason?: unknown; detail?: unknown };
    if (v.ok === true) return { ok: true };
    if (v.ok === false && typeof v.reason === 'string' && typeof v.detail === 'string') {
      return { ok: false, reason: v.reason as TunnelRefusal, detail: v.detail };
    }
  } catch {
    // fall through: not an answer
  }
  return { ok: false, reason: 'protocol', detail: 'the destination answered outside the tunnel protocol' };
}

/**
 * Reads one line from a stream without losing what follows it (QEMU's first bytes may share the
 * packet). Resolves the line and the bytes after it; rejects past MAX_LINE_BYTES or at the end.
 */
export function readLine(s: NodeJS.ReadableStream & { unshift(chunk: Buffer): void }): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (err: Error | undefined, line?: string): void => {
      s.removeListener('data', onData);
      s.removeListener('end', onEnd);
      s.removeListener('error', onEnd);
      s.removeListener('close', onEnd);
      s.pause();
      if (err) reject(err);
      else resolve(line ?? '');
    };
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(0x0a);
      if (nl >= 0) {
        const rest = buf.subarray(nl + 1);
        done(undefined, buf.subarray(0, nl).toString('utf8'));
        if (rest.length > 0) s.unshift(rest);
      } else if (buf.length > MAX_LINE_BYTES) {
        // readLine's callers code it: the dialer as MigrationCredentialRejected (handshake), the listener drops the socket.
        done(new Error(`header line longer than ${MAX_LINE_BYTES} bytes`));
      }
    };
    const onEnd = (e?: unknown): void => done(e instanceof Error ? e : new Error('connection ended before the header line'));
    s.on('data', onData);
    s.once('end', onEnd);
    s.once('error', onEnd);
    // A socket destroyed (timeout, revocation) emits neither 'end' nor 'error'.
    s.once('close', onEnd);
  });
}
