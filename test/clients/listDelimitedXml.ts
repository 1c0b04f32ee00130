/**
 * How requestbuilder (the library under euca2ools 3.x and the Eucalyptus 4 admin tools) reads an
 * answer: `parse_listdelimited_aws_xml(stream, list_tags)` (boto/requestbuilder
 * requestbuilder/xmlparse.py:104-176 at b4ff332). Each element becomes its text when it has no
 * child element, `{}` when it has neither (xmlparse.py:153-158, 166-172), else a dict of its
 * children by tag name, the last one winning; an element whose tag is one of the command's
 * LIST_TAGS becomes the list of its children's values, whatever they are called (:140-152). Tags
 * lose their namespace (:179-183). `parse_aws_xml`, used for error documents, is the same walk with
 * no list tags (exceptions.py of both tool sets). A document the XML parser refuses is the
 * ValueError('XML parse error') the tools report.
 *
 * One difference, harmless here: ElementTree keeps a whitespace-only text, xml2js drops it, so such
 * an element reads as `{}` instead of `' '`.
 */
import xml2js from 'xml2js';

/** What the tools see: a string, a dict, or (for LIST_TAGS) a list. */
export type ToolValue = string | ToolDict | ToolValue[];
export interface ToolDict { [tag: string]: ToolValue }

interface OrderedNode {
  readonly '#name': string;
  readonly _?: string;
  readonly $$?: OrderedNode[];
}

export class XmlParseError extends Error {
  constructor(detail: string) {
    super(`XML parse error (${detail})`);
    this.name = 'XmlParseError';
  }
}

const stripNs = (tag: string): string => tag.slice(tag.indexOf(':') + 1);

function valueOf(node: OrderedNode, listTags: ReadonlySet<string>): ToolValue {
  const children = node.$$ ?? [];
  if (listTags.has(stripNs(node['#name']))) return children.map((c) => valueOf(c, listTags));
  if (children.length === 0) return typeof node._ === 'string' ? node._ : {};
  const dict: ToolDict = {};
  for (const c of children) dict[stripNs(c['#name'])] = valueOf(c, listTags);
  return dict;
}

/** `parse_listdelimited_aws_xml(text, listTags)`: `{ RootTag: value }`. */
export async function parseListDelimitedXml(text: string, listTags: readonly string[] = []): Promise<ToolDict> {
  let doc: Record<string, OrderedNode>;
  try {
    doc = (await xml2js.parseStringPromise(text, {
      explicitChildren: true, preserveChildrenOrder: true, explicitCharkey: true, charkey: '_', explicitRoot: true,
    })) as Record<string, OrderedNode>;
  } catch (e) {
    throw new XmlParseError((e as Error).message.split('\n')[0] ?? 'unreadable');
  }
  const [rootTag, root] = Object.entries(doc)[0] ?? [];
  if (rootTag === undefined || root === undefined) throw new XmlParseError('no root element');
  return { [stripNs(rootTag)]: valueOf({ ...root, '#name': rootTag }, new Set(listTags)) };
}

/** A dict member as the tools' `.get(key)` sees it (undefined when absent or not a dict). */
export function get(v: ToolValue | undefined, key: string): ToolValue | undefined {
  return v !== undefined && typeof v === 'object' && !Array.isArray(v) ? v[key] : undefined;
}

/** `x or []` for a LIST_TAGS member. */
export function list(v: ToolValue | undefined): ToolValue[] {
  return Array.isArray(v) ? v : [];
}

/** A leaf's text (undefined for `{}`, a dict or a list). */
export function text(v: ToolValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
