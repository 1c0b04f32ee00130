/**
 * Lossless typed XML for tier-to-tier messages, built with xml2js. Each element carries its type in
 * a `t` attribute (s string, n number, b boolean, z null, a array of <item>, o object, x base64
 * string); the root element is the operation and is always an object. Written by hand on top of
 * xml2js because xml2js alone cannot tell a one-element array from a scalar or "5" from 5.
 */
import xml2js from 'xml2js';
import { WireErrors } from './errors.js';

export type WireValue = string | number | boolean | null | WireValue[] | WireObject;
export interface WireObject {
  [key: string]: WireValue;
}

export const WIRE_NS = 'urn:ferry:wire:1';
const MAX_DEPTH = 32;
/** Element names: letters first; no '$'/'_' (xml2js's own keys), no prototype names. */
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
/** BMP characters XML 1.0 carries unchanged (parsers normalise \r; the rest goes base64, losslessly). */
const PLAIN_TEXT = /^[\t\n\u0020-\uD7FF\uE000-\uFFFD]*$/u;

function isSafeName(name: string): boolean {
  return NAME.test(name) && !(name in Object.prototype);
}

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

function malformed(detail: string): never {
  throw WireErrors.make('MalformedXml', { detail });
}

function decodeNode(node: unknown, path: string, depth: number): WireValue {
  if (depth > MAX_DEPTH) malformed(`nesting deeper than ${MAX_DEPTH} at ${path}`);
  if (typeof node === 'string') return node;
  if (typeof node !== 'object' || node === null) malformed(`unexpected node at ${path}`);
  const { $: attrs = {}, _: text = '', ...children } = node as { $?: Record<string, string>; _?: string; [k: string]: unknown };
  const t = attrs.t ?? 's';
  const childNames = Object.keys(children);
  const leaf = (): void => {
    if (childNames.length > 0) malformed(`${path} has type ${t} but contains elements`);
  };
  switch (t) {
    case 's':
      leaf();
      return text;
    case 'x':
      leaf();
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) malformed(`${path} is not base64`);
      return Buffer.from(text, 'base64').toString('utf8');
    case 'n': {
      leaf();
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) malformed(`${path} is not a number`);
      return n;
    }
    case 'b':
      leaf();
      if (text !== 'true' && text !== 'false') malformed(`${path} is not a boolean`);
      return text === 'true';
    case 'z':
      leaf();
      return null;
    case 'a': {
      if (text.trim() !== '') malformed(`${path} mixes text and elements`);
      if (childNames.some((c) => c !== 'item')) malformed(`${path} is an array but holds elements other than <item>`);
      const items = (children.item ?? []) as unknown[];
      return items.map((x, i) => decodeNode(x, `${path}[${i}]`, depth + 1));
    }
    case 'o':
      if (text.trim() !== '') malformed(`${path} mixes text and elements`);
      return decodeFields(children, path, depth + 1);
    default:
      return malformed(`${path} has unknown type ${t}`);
  }
}

function decodeFields(children: Record<string, unknown>, path: string, depth: number): WireObject {
  const out: WireObject = {};
  for (const [name, list] of Object.entries(children)) {
    if (!isSafeName(name)) malformed(`element name ${name} is not allowed`);
    if (!Array.isArray(list) || list.length !== 1) malformed(`${path ? `${path}.` : ''}${name} appears more than once`);
    out[name] = decodeNode(list[0], path ? `${path}.${name}` : name, depth);
  }
  return out;
}

export interface DecodedMessage {
  readonly operation: string;
  readonly body: WireObject;
}

/** Decodes a message; anything that is not Ferry wire XML is a MalformedXml error. */
export async function decodeMessage(xml: string): Promise<DecodedMessage> {
  let parsed: unknown;
  try {
    parsed = await xml2js.parseStringPromise(xml, { explicitArray: true, explicitCharkey: true, strict: true });
  } catch (e) {
    malformed((e as Error).message.split('\n')[0] ?? 'parse error');
  }
  if (typeof parsed !== 'object' || parsed === null) malformed('empty document');
  const roots = Object.keys(parsed as object);
  const operation = roots[0];
  if (roots.length !== 1 || operation === undefined) malformed('expected exactly one root element');
  if (!isSafeName(operation)) malformed(`root element ${operation} is not allowed`);
  const root = (parsed as Record<string, unknown>)[operation];
  if (typeof root === 'string') {
    if (root.trim() !== '') malformed('root element holds text');
    return { operation, body: {} };
  }
  const { $: attrs = {}, _: text = '', ...children } = root as { $?: Record<string, string>; _?: string };
  if (attrs.xmlns !== undefined && attrs.xmlns !== WIRE_NS) malformed(`unknown namespace ${attrs.xmlns}`);
  if (text.trim() !== '') malformed('root element holds text');
  return { operation, body: decodeFields(children, '', 1) };
}
