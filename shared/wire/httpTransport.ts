import http from 'node:http';
import https from 'node:https';
import { FerryError } from '../errors/registry.js';
import { WireErrors } from './errors.js';
import { soapActionOf } from './soapAction.js';
import { DEFAULT_DECODE_LIMITS, WireDecoder, type DecodedMessage } from './wireDecoder.js';
import { encodeMessage, type WireObject } from './xmlCodec.js';
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
    const { status, decoded } = await this.post(url, payload, operation, timeoutMs);
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

  /** Sends the request and decodes the answer as it arrives (bounded: a peer's answer is not trusted to be small). */
  private post(url: URL, payload: string, operation: string, timeoutMs: number): Promise<{ status: number; decoded: DecodedMessage }> {
    const isHttps = url.protocol === 'https:';
    const lib = isHttps ? https : http;
    const max = this.opts.maxResponseBytes ?? DEFAULT_DECODE_LIMITS.maxBytes;
    const peer = url.origin;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': Buffer.byteLength(payload), soapaction: soapActionOf(operation) },
      }, (res) => {
        const decoder = new WireDecoder({ ...DEFAULT_DECODE_LIMITS, maxBytes: Number.POSITIVE_INFINITY });
        let size = 0;
        let refused = false;
        const refuse = (detail: string): void => {
          refused = true;
          req.destroy();
          reject(WireErrors.make('PeerProtocolError', { peer, operation, detail }));
        };
        res.on('data', (c: Buffer) => {
          if (refused) return;
          size += c.length;
          try {
            if (size > max) refuse(`response larger than ${max} bytes`);
            else decoder.write(c);
          } catch (e) {
            refuse((e as Error).message);
          }
        });
        res.on('end', () => {
          if (refused) return;
          try {
            resolve({ status: res.statusCode ?? 0, decoded: decoder.end() });
          } catch (e) {
            reject(WireErrors.make('PeerProtocolError', { peer, operation, detail: (e as Error).message }));
          }
        });
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
