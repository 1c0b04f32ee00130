/**
 * EC2-shaped XML out of plain values, with xml2js's Builder. Lists become `<item>` elements as EC2
 * writes them, absent values are left out, and text is scrubbed of characters XML 1.0 cannot carry
 * (an echoed client value must not turn an error reply into a builder crash).
 */
import xml2js from 'xml2js';
import type { FerryError } from '../../shared/errors/registry.js';

export const EC2_NAMESPACE = 'http://ec2.amazonaws.com/doc/2013-02-01/';
/** Eucalyptus-only actions (services, nodes) answer in Eucalyptus's message namespace. */
export const EUCA_NAMESPACE = 'http://msgs.eucalyptus.com/';

export type XmlValue = string | number | boolean | null | undefined | readonly XmlValue[] | XmlObject;
export interface XmlObject {
  readonly [element: string]: XmlValue;
}

type BuilderNode = string | { [k: string]: BuilderNode | BuilderNode[] };

const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

function text(v: string | number | boolean): string {
  return String(v).replace(NOT_XML_CHAR, '\uFFFD');
}

function toBuilder(v: Exclude<XmlValue, null | undefined>): BuilderNode {
  if (typeof v !== 'object') return text(v);
  if (Array.isArray(v)) {
    const items = (v as readonly XmlValue[]).filter((x): x is Exclude<XmlValue, null | undefined> => x !== null && x !== undefined);
    return items.length === 0 ? '' : { item: items.map(toBuilder) };
  }
  return objectToBuilder(v as XmlObject);
}

function objectToBuilder(o: XmlObject): { [k: string]: BuilderNode } {
  const out: { [k: string]: BuilderNode } = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || v === undefined) continue;
    out[k] = toBuilder(v);
  }
  return out;
}

function build(root: string, body: { [k: string]: BuilderNode | BuilderNode[] }): string {
  const builder = new xml2js.Builder({ renderOpts: { pretty: false }, xmldec: { version: '1.0', encoding: 'UTF-8' } });
  return builder.buildObject({ [root]: body });
}

/** `<{Action}Response xmlns=...><requestId>...</requestId>...body...</{Action}Response>` */
export function renderResponse(action: string, namespace: string, requestId: string, body: XmlObject): string {
  return build(`${action}Response`, { $: { xmlns: namespace } as unknown as BuilderNode, requestId: text(requestId), ...objectToBuilder(body) });
}

/** EC2's error document; the HTTP status travels beside it. */
export function renderError(err: FerryError, requestId: string): string {
  return build('Response', {
    Errors: { Error: { Code: text(err.code), Message: text(err.message) } },
    RequestID: text(requestId),
  });
}
