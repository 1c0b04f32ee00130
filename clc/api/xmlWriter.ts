/**
 * The XML writer behind every admin API answer: EC2's document shape (elements, text, lists as
 * `<item>`, one namespace attribute on the root) written straight into strings.
 *
 * Written by hand on purpose (issue 19, the `api` case): a general builder (xml2js's, xmlbuilder
 * underneath) makes an object per node and checks every name and character again, and that was
 * most of the CLC's CPU for a 1,000-instance DescribeInstances. This writer produces the very bytes
 * the builder produced (test/clc/xmlWriter.test.ts compares the two on generated documents): names
 * are checked once each and remembered, text is escaped as xmlbuilder escapes it (&, <, >, CR), and
 * characters XML 1.0 cannot carry are replaced beforehand (an echoed client value must not break an
 * error reply).
 */

export type XmlValue = string | number | boolean | null | undefined | readonly XmlValue[] | XmlObject | RawXml;
export interface XmlObject {
  readonly [element: string]: XmlValue;
}

/** An element's content written before (xmlContent), placed as is: a rendering kept for reuse. */
export class RawXml {
  constructor(readonly inner: string) {}
}

const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const NEEDS_TEXT_ESCAPE = /[&<>\r]/;
// XML 1.0's Name production, as xmlbuilder checks it.
const LEGAL_NAME = /^([:A-Z_a-z\xC0-\xD6\xD8-\xF6\xF8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]|[\uD800-\uDB7F][\uDC00-\uDFFF])([\x2D.0-:A-Z_a-z\xB7\xC0-\xD6\xD8-\xF6\xF8-\u037D\u037F-\u1FFF\u200C\u200D\u203F\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]|[\uD800-\uDB7F][\uDC00-\uDFFF])*$/u;
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Element names seen legal: the API's names are a fixed few hundred, checked once each. */
const legalNames = new Set<string>();

function checkName(name: string): string {
  if (legalNames.has(name)) return name;
  // A programming error (every element name is the API's own), never a client's doing: the error
  // handler answers it as InternalError.
  if (!LEGAL_NAME.test(name)) throw new Error(`not an XML element name: ${JSON.stringify(name)}`);
  legalNames.add(name);
  return name;
}

/** A value as element text: characters XML cannot carry replaced, then &, <, > and CR escaped. */
export function xmlText(v: string | number | boolean): string {
  const s = typeof v === 'string' ? v.replace(NOT_XML_CHAR, '\uFFFD') : String(v);
  if (!NEEDS_TEXT_ESCAPE.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
}

function attrText(s: string): string {
  return s.replace(NOT_XML_CHAR, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
    .replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');
}

const present = (v: XmlValue): v is Exclude<XmlValue, null | undefined> => v !== null && v !== undefined;

/** `<open>` + what `fill` writes + `</tag>`, or `<open/>` when it writes nothing. */
function element(out: string[], open: string, tag: string, fill: () => void): void {
  const at = out.push(`${open}>`) - 1;
  fill();
  if (out.length === at + 1) out[at] = `${open}/>`;
  else out.push(`</${tag}>`);
}

/** What goes between an element's tags: its text, its kept rendering, its `<item>`s or its children. */
function writeContent(out: string[], v: Exclude<XmlValue, null | undefined>): void {
  if (typeof v !== 'object') {
    const t = xmlText(v);
    if (t !== '') out.push(t);
  } else if (v instanceof RawXml) {
    if (v.inner !== '') out.push(v.inner);
  } else if (Array.isArray(v)) {
    for (const item of v as readonly XmlValue[]) if (present(item)) writeElement(out, 'item', item);
  } else {
    writeChildren(out, v as XmlObject);
  }
}

function writeElement(out: string[], name: string, v: Exclude<XmlValue, null | undefined>): void {
  const tag = checkName(name);
  element(out, `<${tag}`, tag, () => writeContent(out, v));
}

function writeChildren(out: string[], o: XmlObject): void {
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const v = o[k];
    if (present(v)) writeElement(out, k, v);
  }
}

/** A whole document: the declaration, then `root` with an optional xmlns and its children. */
export function xmlDocument(root: string, namespace: string | undefined, children: XmlObject): string {
  const tag = checkName(root);
  const out: string[] = [DECLARATION];
  element(out, namespace === undefined ? `<${tag}` : `<${tag} xmlns="${attrText(namespace)}"`, tag, () => writeChildren(out, children));
  return out.join('');
}

/** What writing `v` as an element's content gives, for a RawXml to carry later. */
export function xmlContent(v: Exclude<XmlValue, null | undefined>): RawXml {
  const out: string[] = [];
  writeContent(out, v);
  return new RawXml(out.join(''));
}
