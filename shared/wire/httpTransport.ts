import http from 'node:http';
import https from 'node:https';
import { createSecureContext } from 'node:tls';
import { FerryError } from '../errors/registry.js';
import { WireErrors } from './errors.js';
import { soapActionOf } from './soapAction.js';
import { DEFAULT_DECODE_LIMITS, type DecodedMessage } from './wireDecoder.js';
import { contentTypeOf, decoderFor, encodeFor, encodingOfContentType, type WireEncoding } from './wireEncoding.js';
import type { WireObject } from './wireValue.js';
import type { CallOptions, WireTransport } from './transport.js';

/** After a peer refused JSON, it is called in XML for this long, then JSON is tried again (it may have been upgraded). */
export const XML_ONLY_RETRY_MS = 10 * 60_000;

export interface HttpTransportOptions {
  /** Path appended to the endpoint for each call (CC_PATH or NC_PATH). */
  readonly path: string;
  readonly defaultTimeoutMs?: number;
  /** TLS settings (key, cert, ca) for https endpoints. */
  readonly tls?: https.AgentOptions;
  /** Largest response accepted, bytes. */
  readonly maxResponseBytes?: number;
  /**
   * What requests are sent in (default json, compact, between Ferry's own tiers). A peer that refuses
   * JSON (an older Ferry, XML only: 415 UnsupportedMediaType, decided before its body is read, so
   * nothing was done) is called again in XML, and in XML for XML_ONLY_RETRY_MS after that.
   */
  readonly encoding?: WireEncoding;
  /** Milliseconds now, for the XML-only memory (default Date.now). */
  readonly now?: () => number;
}

/** Typed XML or compact JSON over HTTP(S) with node:http, so TLS client certificates can be added without another client. */
export class HttpWireTransport implements WireTransport {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent: https.Agent;
  /** Endpoints that refused JSON, until when they are called in XML. */
  private readonly xmlOnlyUntil = new Map<string, number>();

  constructor(private readonly opts: HttpTransportOptions) {
    // One secure context for every connection: given key, cert and ca alone, tls.connect parses them
    // into a new context per connection (a third of a CC's CPU reconnecting to 1,000 NCs).
    const tls = opts.tls;
    const secureContext = tls && (tls.key !== undefined || tls.cert !== undefined || tls.ca !== undefined)
      ? createSecureContext({ key: tls.key, cert: tls.cert, ca: tls.ca, minVersion: tls.minVersion })
      : undefined;
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, ...tls, ...(secureContext ? { secureContext } : {}) });
  }

  async call(endpoint: string, operation: string, body: WireObject, callOpts: CallOptions = {}): Promise<WireObject> {
    const timeoutMs = callOpts.timeoutMs ?? this.opts.defaultTimeoutMs ?? 10_000;
    const url = new URL(this.opts.path, endpoint);
    const encoding = this.encodingFor(url.origin);
    let answer = await this.postRepeatingReads(url, encoding, encodeFor(encoding, operation, body), operation, timeoutMs);
    if (encoding === 'json' && refusedJson(answer)) {
      this.xmlOnlyUntil.set(url.origin, this.now() + XML_ONLY_RETRY_MS);
      answer = await this.postRepeatingReads(url, 'xml', encodeFor('xml', operation, body), operation, timeoutMs);
    }
    const { status, decoded } = answer;
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

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The configured encoding, unless this peer refused JSON recently. */
  private encodingFor(origin: string): WireEncoding {
    const configured = this.opts.encoding ?? 'json';
    if (configured === 'xml') return 'xml';
    const until = this.xmlOnlyUntil.get(origin);
    if (until === undefined) return configured;
    if (this.now() < until) return 'xml';
    this.xmlOnlyUntil.delete(origin);
    return configured;
  }

  /**
   * A read (`ccDescribe…`, `ncDescribe…`: they change nothing, so a repeat is harmless) that was reset
   * on a kept-alive socket before any answer is sent again on another: the peer closed that idle socket
   * as the request went out (Node's own advice for this race). Anything else is the caller's to judge.
   */
  private async postRepeatingReads(url: URL, encoding: WireEncoding, payload: string, operation: string, timeoutMs: number): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.post(url, encoding, payload, operation, timeoutMs);
      } catch (e) {
        if (!(e instanceof StaleSocketReset)) throw e;
        if (!READ_OPERATION.test(operation) || attempt >= STALE_SOCKET_ATTEMPTS) throw e.error;
      }
    }
  }

  /** Sends the request and decodes the answer, in the encoding its Content-Type names, as it arrives (bounded: a peer's answer is not trusted to be small). */
  private post(url: URL, encoding: WireEncoding, payload: string, operation: string, timeoutMs: number): Promise<Answer> {
    const isHttps = url.protocol === 'https:';
    const lib = isHttps ? https : http;
    const max = this.opts.maxResponseBytes ?? DEFAULT_DECODE_LIMITS.maxBytes;
    const peer = url.origin;
    return new Promise((resolve, reject) => {
      const req = lib.request(url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        headers: { 'content-type': contentTypeOf(encoding), 'content-length': Buffer.byteLength(payload), soapaction: soapActionOf(operation) },
      }, (res) => {
        // An answer that names no encoding is an older Ferry's, which writes XML only.
        const answerEncoding = encodingOfContentType(res.headers['content-type']) ?? 'xml';
        const decoder = decoderFor(answerEncoding, { ...DEFAULT_DECODE_LIMITS, maxBytes: Number.POSITIVE_INFINITY });
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
      let answered = false;
      req.on('response', () => { answered = true; });
      req.on('error', (e) => {
        const error = e instanceof FerryError ? e : WireErrors.make('PeerUnreachable', { peer, detail: (e as NodeJS.ErrnoException).code ?? e.message });
        const code = (e as NodeJS.ErrnoException).code;
        reject(req.reusedSocket && !answered && code !== undefined && STALE_SOCKET_CODES.has(code) ? new StaleSocketReset(error) : error);
      });
      req.end(payload);
    });
  }

  close(): void {
    this.xmlOnlyUntil.clear();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

interface Answer { readonly status: number; readonly decoded: DecodedMessage }

/** Operations that only read: safe to send again after a reset of a kept-alive socket. */
const READ_OPERATION = /^(cc|nc)Describe/;
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** Each attempt may pick another stale socket from the agent; a fresh one ends it. */
const STALE_SOCKET_ATTEMPTS = 3;

/**
 * Internal: a call reset on a reused socket before any answer; `error` is what the caller sees when it
 * is not sent again (never thrown out of the transport itself).
 */
class StaleSocketReset extends Error {
  constructor(readonly error: FerryError) {
    super(error.message);
  }
}

/** The peer does not read JSON: it refused the media type before reading the body. */
function refusedJson(a: Answer): boolean {
  return a.status === 415 && a.decoded.operation === 'Fault' && a.decoded.body.code === 'UnsupportedMediaType';
}
