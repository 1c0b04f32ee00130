/**
 * Reads a response the way the Eucalyptus 4 admin tools do (requestbuilder's list-delimited AWS XML
 * reading, re-stated here from its documented behaviour): an element with children is a map of them,
 * a repeated name keeping the last; an element named in `listTags` is the list of its children's
 * values, whatever their names; a leaf is its text, or `{}` when empty. The root is stripped.
 */
import xml2js from 'xml2js';

export type RbValue = string | RbValue[] | { [name: string]: RbValue };

interface OrderedNode {
  readonly '#name': string;
  readonly _?: string;
  readonly $$?: readonly OrderedNode[];
}

function valueOf(node: OrderedNode, listTags: ReadonlySet<string>): RbValue {
  const children = node.$$ ?? [];
  if (listTags.has(node['#name'])) return children.map((c) => valueOf(c, listTags));
  if (children.length === 0) return node._ ?? {};
  const out: { [name: string]: RbValue } = {};
  for (const c of children) out[c['#name']] = valueOf(c, listTags);
  return out;
}

export async function readLikeRequestbuilder(text: string, listTags: readonly string[]): Promise<{ [name: string]: RbValue }> {
  const doc = await xml2js.parseStringPromise(text, {
    explicitChildren: true, preserveChildrenOrder: true, explicitArray: true, ignoreAttrs: true, explicitRoot: false, charsAsChildren: false,
  }) as OrderedNode & { '#name'?: string };
  // explicitRoot off leaves the root's own node; its name is not needed.
  return valueOf({ ...doc, '#name': '' }, new Set(listTags)) as { [name: string]: RbValue };
}
