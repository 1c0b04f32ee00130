/**
 * The hand-written XML writer (clc/api/xmlWriter.ts) against the library it replaced: on generated
 * documents (names, awkward text, nesting, empty lists and objects, absent values) it writes the
 * very bytes xml2js's Builder wrote from the same values, so no client sees a difference.
 */
import fc from 'fast-check';
import xml2js from 'xml2js';
import { describe, expect, it } from 'vitest';
import { xmlDocument, xmlText, type XmlObject, type XmlValue } from '../../clc/api/xmlWriter.js';
import { renderError, renderResponse } from '../../clc/api/xmlResponse.js';
import { ClcErrors } from '../../clc/core/errors.js';

// The conversion the CLC used before, kept here as the reference.
type BuilderNode = string | { [k: string]: BuilderNode | BuilderNode[] };
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const text = (v: string | number | boolean): string => String(v).replace(NOT_XML_CHAR, '\uFFFD');
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
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = toBuilder(v);
  return out;
}
function reference(root: string, namespace: string | undefined, body: XmlObject): string {
  const builder = new xml2js.Builder({ renderOpts: { pretty: false }, xmldec: { version: '1.0', encoding: 'UTF-8' } });
  const attrs = namespace === undefined ? {} : { $: { xmlns: namespace } as unknown as BuilderNode };
  return builder.buildObject({ [root]: { ...attrs, ...objectToBuilder(body) } });
}

const names = fc.constantFrom('instanceId', 'item', 'nodeState', 'reservationSet', 'x', 'tag-key', 'a.b', 'Ünïcode', 'n0');
const texts = fc.oneof(
  fc.string({ unit: 'grapheme-composite' }), fc.string({ unit: 'binary' }),
  fc.constantFrom('', ' ', 'a&b', '<tag>', 'x > y', '"quoted" \'single\'', 'line\r\nbreak\ttab', '&amp;', ']]>', '\u0000\u0001\uFFFE\uD800'),
);
const leaves = fc.oneof(texts, fc.integer(), fc.double({ noNaN: false }), fc.boolean(), fc.constant(null), fc.constant(undefined));
const { tree } = fc.letrec<{ tree: XmlValue; obj: XmlObject }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaves, fc.array(tie('tree'), { maxLength: 4 }), tie('obj')),
  obj: fc.dictionary(names, tie('tree'), { maxKeys: 5 }) as fc.Arbitrary<XmlObject>,
}));
const bodies = fc.dictionary(names, tree, { maxKeys: 6 }) as fc.Arbitrary<XmlObject>;

describe('the XML writer', () => {
  it('writes what xml2js wrote for any document', () => {
    // A namespace is one of the API's constants: anything XML can carry.
    const namespaces = fc.option(texts.filter((t) => t.match(NOT_XML_CHAR) === null), { nil: undefined });
    fc.assert(fc.property(bodies, namespaces, (body, ns) => {
      expect(xmlDocument('DescribeInstancesResponse', ns, body)).toBe(reference('DescribeInstancesResponse', ns, body));
    }), { numRuns: 2000 });
  });

  it.each<[string, XmlObject]>([
    ['empty body', {}],
    ['empty list and empty object', { a: [], b: {}, c: [null, undefined], d: { e: null } }],
    ['nested lists', { set: [[1, 2], [], [{ k: 'v' }]] }],
    ['text needing escapes', { t: 'a & b < c > d\r\n"e"' }],
  ])('%s', (_name, body) => {
    expect(xmlDocument('R', 'http://ec2.amazonaws.com/doc/2013-02-01/', body)).toBe(reference('R', 'http://ec2.amazonaws.com/doc/2013-02-01/', body));
  });

  it('answers and errors render as before', () => {
    const body = { reservationSet: [{ reservationId: 'r-1', instancesSet: [{ instanceId: 'i-1', instanceState: { code: 16, name: 'running' } }] }] };
    expect(renderResponse('DescribeInstances', 'ns', 'req-1', body)).toBe(reference('DescribeInstancesResponse', 'ns', { requestId: 'req-1', ...body }));
    const err = ClcErrors.make('InvalidParameterValue', { detail: 'bad <value> & \u0007' });
    expect(renderError(err, 'req-2')).toBe(reference('Response', undefined, { Errors: { Error: { Code: err.code, Message: err.message } }, RequestID: 'req-2' }));
  });

  it('refuses an element name XML cannot carry (a programming error, never written half-way)', () => {
    expect(() => xmlDocument('R', undefined, { 'bad name': 'x' })).toThrow(/not an XML element name/);
    expect(() => xmlDocument('1R', undefined, {})).toThrow(/not an XML element name/);
  });

  it('escapes text as xmlbuilder does and scrubs what XML cannot carry', () => {
    expect(xmlText('a&b<c>d\re"f\'')).toBe('a&amp;b&lt;c&gt;d&#xD;e"f\'');
    expect(xmlText('\u0000x')).toBe('\uFFFDx');
    expect(xmlText(12.5)).toBe('12.5');
  });
});
