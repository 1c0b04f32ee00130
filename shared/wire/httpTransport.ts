import http from 'node:http';
import https from 'node:https';
import { FerryError } from '../errors/registry.js';
import { WireErrors } from './errors.js';
import { decodeMessage, encodeMessage, type WireObject } from './xmlCodec.js';
import type { CallOptions, WireTransport } from './transport.js';

export interface HttpTransportOptions {
  /** Path appended to the endpoint for each call (CC_PATH or NC_PATH). */
  readonly path: string;
  readonly defaultTimeoutMs?: number;
  /** TLS settings (key, cert, ca) for https endpoints. */
  readonly tls?: https.AgentOptions;
  /** Largest response accepted, bytes. */
  readonly maxResponseBytes?: number;
}

/** XML over HTTP(S) with node:http, so TLS client certificates can be added without another client. */
export class HttpWireTransport implements WireTransport {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: HttpTransportOptions) {
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ...opts.tls });
  }

  async call(endpoint: string, operation: string, body: WireObject, callOpts: CallOptions = {}): Promise<WireObject> {
    const timeoutMs = callOpts.timeoutMs ?? this.opts.defaultTimeoutMs ?? 10_000;
    const payload = encodeMessage(operation, body);
    const url = new URL(this.opts.path, endpoint);
    const { status, text } = await this.post(url, payload, operation, timeoutMs);
    let decoded;
    try {
      decoded = await decodeMessage(text);
    } catch (e) {
      throw WireErrors.make('PeerProtocolError', { peer: endpoint, operation, detail: (e as Error).message });
    }
    if (status >= 200 && status < 300 && decoded.operation === `${operation}Response`) return decoded.body;
    if (decoded.operation === 'Fault' && typeof decoded.body.code === 'string') {
      const remoteMessage = typeof decoded.body.message === 'string' ? decoded.body.message : '';
      const err = WireErrors.make('RemoteFault', {
        peer: endpoint, operation, remoteCode: decoded.body.code, remoteMessage, remoteStatus: status,
      });
      return Promise.reject(err);
    }
    throw WireErrors.make('PeerProtocolError', { peer: endpoint, operation, detail: `HTTP ${status} with root <${decoded.operation}>` });
  }

  private post(url: URL, payload: string, operation: string, timeoutMs: number): Promise<{ status: number; text: string }> {
    const isHttps = url.protocol === 'https:';
    const lib = isHttps ? https : http;
    const max = this.opts.maxResponseBytes ?? 16 * 1024 * 1024;
    const peer = url.origin;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': Buffer.byteLength(payload) },
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > max) {
            req.destroy();
            reject(WireErrors.make('PeerProtocolError', { peer, operation, detail: `response larger than ${max} bytes` }));
          } else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => reject(WireErrors.make('PeerUnreachable', { peer, detail: e.message })));
      });
      req.setTimeout(timeoutMs, () => {
        req.destroy(WireErrors.make('PeerTimeout', { peer, operation, timeoutMs }));
      });
      req.on('error', (e) => {
        reject(e instanceof FerryError ? e : WireErrors.make('PeerUnreachable', { peer, detail: (e as NodeJS.ErrnoException).code ?? e.message }));
      });
      req.end(payload);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
