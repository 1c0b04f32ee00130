/**
 * Compact JSON for tier-to-tier messages between Ferry's own tiers: `{"<operation>": {fields}}`,
 * the same values as the typed XML (xmlCodec.ts) carries, with JSON's own types (a one-element
 * array stays an array, "5" stays a string). The encoder refuses what the XML encoder refuses (names
 * that are not safe element names, numbers that are not finite, nesting past the decoder's bound),
 * so both encodings carry exactly the same messages. Read by jsonDecoder.ts (bounded, incremental).
 */
import { WireErrors } from './errors.js';
import { decodeJsonDocument } from './jsonDecoder.js';
import { DEFAULT_DECODE_LIMITS, type DecodedMessage, type DecodeLimits } from './wireDecoder.js';
import { isSafeName, type WireObject, type WireValue } from './wireValue.js';

const MAX_DEPTH = DEFAULT_DECODE_LIMITS.maxDepth;

function invalid(field: string, detail: string): never {
  throw WireErrors.make('InvalidParameter', { field, detail });
}

/** Throws InvalidParameter where the XML encoder would; undefined fields are left out, as there. */
function checkValue(v: WireValue, path: string, depth: number): void {
  if (depth > MAX_DEPTH) invalid(path, `nesting deeper than ${MAX_DEPTH}`);
  switch (typeof v) {
    case 'string': case 'boolean': return;
    case 'number':
      if (!Number.isFinite(v)) invalid(path, 'not a finite number');
      return;
    case 'object':
      if (v === null) return;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) checkValue(v[i] as WireValue, `${path}[${i}]`, depth + 1);
        return;
      }
      checkFields(v, path, depth + 1);
      return;
    default:
      invalid(path, `unsupported type ${typeof v}`);
  }
}

function checkFields(obj: WireObject, path: string, depth: number): void {
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v === undefined) continue;
    const at = path ? `${path}.${k}` : k;
    if (!isSafeName(k)) invalid(at, 'not a valid element name');
    checkValue(v, at, depth);
  }
}

/** Encodes `{"<operation>": body}`. */
export function encodeJsonMessage(operation: string, body: WireObject): string {
  if (!isSafeName(operation)) invalid('operation', 'not a valid element name');
  checkFields(body, '', 1);
  return JSON.stringify({ [operation]: body });
}

/** Decodes a whole message held in memory; anything that is not Ferry wire JSON is a MalformedJson error. */
export function decodeJsonMessage(json: string | Buffer, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodedMessage {
  return decodeJsonDocument(json, limits);
}
