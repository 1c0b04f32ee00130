/**
 * Lossless typed XML for tier-to-tier messages. Each element carries its type in a `t` attribute
 * (s string, n number, b boolean, z null, a array of <item>, o object, x base64 string); the root
 * element is the operation and is always an object, so a one-element array stays an array and "5"
 * stays a string. Written with xml2js's builder; read by wireDecoder.ts (sax, incremental, bounded).
 */
import xml2js from 'xml2js';
import { WireErrors } from './errors.js';
import { decodeDocument, DEFAULT_DECODE_LIMITS, type DecodedMessage, type DecodeLimits } from './wireDecoder.js';
import { isSafeName, WIRE_NS, type WireObject, type WireValue } from './wireValue.js';

export type { DecodedMessage, DecodeLimits } from './wireDecoder.js';
export { WIRE_NS, type WireObject, type WireValue } from './wireValue.js';

/** The encoder refuses values nested deeper than the decoder accepts. */
const MAX_DEPTH = DEFAULT_DECODE_LIMITS.maxDepth;
/** BMP characters XML 1.0 carries unchanged (parsers normalise \r; the rest goes base64, losslessly). */
const PLAIN_TEXT = /^[\t\n\u0020-\uD7FF\uE000-\uFFFD]*$/u;

type XmlNode = string | { $?: Record<string, string>; _?: string; [child: string]: unknown };

function encodeValue(v: WireValue, path: string, depth: number): XmlNode {
  if (depth > MAX_DEPTH) throw WireErrors.make('InvalidParameter', { field: path, detail: `nesting deeper than ${MAX_DEPTH}` });
  if (v === null) return { $: { t: 'z' } };
  switch (typeof v) {
    case 'string':
      if (PLAIN_TEXT.test(v)) {
        return v === '' ? '' : { _: v };
      }
      return { $: { t: 'x' }, _: Buffer.from(v, 'utf8').toString('base64') };
    case 'number':
      if (!Number.isFinite(v)) throw WireErrors.make('InvalidParameter', { field: path, detail: 'not a finite number' });
      return { $: { t: 'n' }, _: String(v) };
    case 'boolean':
      return { $: { t: 'b' }, _: String(v) };
    case 'object':
      if (Array.isArray(v)) {
        return { $: { t: 'a' }, item: v.map((x, i) => encodeValue(x, `${path}[${i}]`, depth + 1)) };
      }
      return { $: { t: 'o' }, ...encodeFields(v, path, depth + 1) };
    default:
      throw WireErrors.make('InvalidParameter', { field: path, detail: `unsupported type ${typeof v}` });
  }
}

function encodeFields(obj: WireObject, path: string, depth: number): Record<string, XmlNode[]> {
  const out: Record<string, XmlNode[]> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    if (!isSafeName(k)) throw WireErrors.make('InvalidParameter', { field: `${path}.${k}`, detail: 'not a valid element name' });
    out[k] = [encodeValue(v, path ? `${path}.${k}` : k, depth)];
  }
  return out;
}

/** Encodes `<operation xmlns=...>fields</operation>`. */
export function encodeMessage(operation: string, body: WireObject): string {
  if (!isSafeName(operation)) throw WireErrors.make('InvalidParameter', { field: 'operation', detail: 'not a valid element name' });
  const builder = new xml2js.Builder({ headless: false, renderOpts: { pretty: false }, xmldec: { version: '1.0', encoding: 'UTF-8' } });
  return builder.buildObject({ [operation]: { $: { xmlns: WIRE_NS }, ...encodeFields(body, '', 1) } });
}

/** Decodes a whole message held in memory; anything that is not Ferry wire XML is a MalformedXml error. */
export function decodeMessage(xml: string | Buffer, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): Promise<DecodedMessage> {
  try {
    return Promise.resolve(decodeDocument(xml, limits));
  } catch (e) {
    return Promise.reject(e as Error);
  }
}
