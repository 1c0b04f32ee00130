/**
 * The two encodings of a tier-to-tier message and how a request picks one: by its Content-Type.
 * A server reads both and answers in the request's encoding, so an XML-only peer (an older Ferry)
 * always gets XML; a client sends compact JSON unless told to keep XML (docs/ARCHITECTURE.md, "Wire").
 */
import { JsonWireDecoder } from './jsonDecoder.js';
import { encodeJsonMessage } from './jsonCodec.js';
import { WireDecoder, type DecodedMessage, type DecodeLimits } from './wireDecoder.js';
import { encodeMessage } from './xmlCodec.js';
import type { WireObject } from './wireValue.js';

export const WIRE_ENCODINGS = ['json', 'xml'] as const;
export type WireEncoding = (typeof WIRE_ENCODINGS)[number];

/** Ferry's JSON envelope is not any JSON: its own media type, so a generic JSON body is not mistaken for it. */
export const JSON_MEDIA_TYPE = 'application/x-ferry+json';
const XML_MEDIA_TYPES: readonly string[] = ['text/xml', 'application/xml'];

/** The Content-Type a message in `encoding` is sent with. */
export function contentTypeOf(encoding: WireEncoding): string {
  return encoding === 'json' ? `${JSON_MEDIA_TYPE}; charset=utf-8` : 'text/xml; charset=utf-8';
}

/** The encoding a Content-Type names, or undefined for any other media type. */
export function encodingOfContentType(contentType: string | undefined): WireEncoding | undefined {
  const media = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (media === JSON_MEDIA_TYPE) return 'json';
  if (XML_MEDIA_TYPES.includes(media)) return 'xml';
  return undefined;
}

/** The one interface both decoders offer: bytes in as they arrive, then the message. */
export interface MessageDecoder {
  write(chunk: Buffer | string): void;
  end(): DecodedMessage;
}

export function decoderFor(encoding: WireEncoding, limits: DecodeLimits, expectOperation?: string): MessageDecoder {
  return encoding === 'json' ? new JsonWireDecoder(limits, expectOperation) : new WireDecoder(limits, expectOperation);
}

export function encodeFor(encoding: WireEncoding, operation: string, body: WireObject): string {
  return encoding === 'json' ? encodeJsonMessage(operation, body) : encodeMessage(operation, body);
}
