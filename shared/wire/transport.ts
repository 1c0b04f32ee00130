/**
 * The narrow interface every tier uses to call another (STYLE habit 4). The real adapter speaks
 * XML over HTTP (httpTransport.ts); the whole-cloud simulator plugs in an in-process one.
 */
import type { WireObject } from './xmlCodec.js';

export interface CallOptions {
  /** Give up after this long; the call fails with PeerTimeout. */
  readonly timeoutMs?: number;
}

export interface WireTransport {
  /**
   * Calls `operation` on the service at `endpoint` (a base URL such as http://127.0.1.1:8775).
   * Resolves with the peer's result; rejects with a FerryError from WireErrors: RemoteFault when the
   * peer answered with its own coded error, PeerUnreachable/PeerTimeout/PeerProtocolError otherwise.
   */
  call(endpoint: string, operation: string, body: WireObject, opts?: CallOptions): Promise<WireObject>;
}

/** What a served operation sees besides its body. */
export interface WireContext {
  /** The caller's address as the server saw it. */
  readonly peer: string;
}

export type WireHandler = (body: WireObject, ctx: WireContext) => Promise<WireObject>;
export type WireHandlers = Readonly<Record<string, WireHandler>>;

/** Service paths, after Eucalyptus's axis2 endpoints. */
export const CC_PATH = '/axis2/services/EucalyptusCC';
export const NC_PATH = '/axis2/services/EucalyptusNC';
