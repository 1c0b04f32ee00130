/**
 * Incremental decoder of Ferry's typed wire XML (the format is described in xmlCodec.ts), on the sax
 * streaming parser. Bytes go in as they arrive (`write`), so a large document is decoded a chunk at a
 * time between other work instead of in one block, and every bound (bytes, elements, attributes,
 * depth, text) is checked as the document is read: a document over a bound is refused at the point
 * it crosses it, not after it has been built. The value is built directly, without an intermediate
 * tree. Anything that is not Ferry wire XML is MalformedXml; a bound crossed is XmlLimitExceeded.
 */
import { StringDecoder } from 'node:string_decoder';
import sax from 'sax';
import { WireErrors } from './errors.js';
import { isSafeName, WIRE_NS, type WireObject, type WireValue } from './wireValue.js';

/** How much of a document the decoder accepts. */
export interface DecodeLimits {
  /** Bytes of the whole document, as received (UTF-8). */
  readonly maxBytes: number;
  /** Elements, the root included. */
  readonly maxElements: number;
  /** Attributes on one element (the format uses one: `t`, or `xmlns` on the root). */
  readonly maxAttributes: number;
  /** Nesting of values below the root (a top-level field is at depth 1). */
  readonly maxDepth: number;
  /** Characters of text in one element. */
  readonly maxTextChars: number;
}

/** A peer's answer may be large (an NC's report, a CC's view); still bounded in every dimension. */
export const DEFAULT_DECODE_LIMITS: DecodeLimits = Object.freeze({
  maxBytes: 16 * 1024 * 1024,
  maxElements: 1_000_000,
  maxAttributes: 4,
  maxDepth: 32,
  maxTextChars: 1024 * 1024,
});

export interface DecodedMessage {
  readonly operation: string;
  readonly body: WireObject;
}

type ValueType = 's' | 'x' | 'n' | 'b' | 'z' | 'a' | 'o';
const TYPES: ReadonlySet<string> = new Set<ValueType>(['s', 'x', 'n', 'b', 'z', 'a', 'o']);

/** One open element: what it is, where it is, and what has been read into it so far. */
interface Frame {
  readonly name: string;
  readonly path: string;
  readonly depth: number;
  type: ValueType;
  text: string;
  /** Set once a child element opened (only `o`, `a` and the root may have children). */
  fields: WireObject | undefined;
  items: WireValue[] | undefined;
}

function malformed(detail: string): never {
  throw WireErrors.make('MalformedXml', { detail });
}

function exceeded(limit: number, what: string): never {
  throw WireErrors.make('XmlLimitExceeded', { limit, what });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The value of a closed leaf or container, by its type (the encoder's rules in reverse). */
function valueOf(f: Frame): WireValue {
  const { type: t, text, path } = f;
  switch (t) {
    case 's':
      return text;
    case 'x':
      if (!BASE64.test(text)) malformed(`${path} is not base64`);
      return Buffer.from(text, 'base64').toString('utf8');
    case 'n': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) malformed(`${path} is not a number`);
      return n;
    }
    case 'b':
      if (text !== 'true' && text !== 'false') malformed(`${path} is not a boolean`);
      return text === 'true';
    case 'z':
      return null;
    case 'a':
      return f.items ?? [];
    case 'o':
      return f.fields ?? {};
  }
}

/**
 * Feed it bytes with write(), then call end() for the message. Every method throws a coded
 * FerryError (MalformedXml, XmlLimitExceeded, OperationMismatch) at the first problem; after that the
 * decoder is spent.
 */
export class WireDecoder {
  private readonly parser: sax.SAXParser;
  private readonly utf8 = new StringDecoder('utf8');
  private readonly stack: Frame[] = [];
  private bytes = 0;
  private elements = 0;
  private attributes = 0;
  private root: { operation: string; body: WireObject } | undefined;
  private done = false;

  /** expectOperation: the root element must be this one (checked as soon as its name is read). */
  constructor(private readonly limits: DecodeLimits = DEFAULT_DECODE_LIMITS, private readonly expectOperation?: string) {
    // strictEntities (sax 1.x, not in its typings): XML's five entities and character references only, not HTML's.
    const options: sax.SAXOptions & { readonly strictEntities: boolean } = { trim: false, normalize: false, xmlns: false, position: false, strictEntities: true };
    const p = sax.parser(true, options);
    p.onerror = (e: Error) => malformed(e.message.split('\n')[0] ?? 'parse error');
    p.ondoctype = () => malformed('a DOCTYPE is not allowed');
    p.onprocessinginstruction = (pi: { name: string }) => {
      if (pi.name !== 'xml' || this.elements > 0) malformed(`processing instruction <?${pi.name}?> is not allowed`);
    };
    p.onopentagstart = (tag: { name: string }) => this.openStart(tag.name);
    p.onattribute = (a: { name: string; value: string }) => this.attribute(a.name, a.value);
    p.ontext = (t: string) => this.text(t);
    p.oncdata = (t: string) => this.text(t);
    p.onclosetag = () => this.close();
    this.parser = p;
  }

  write(chunk: Buffer | string): void {
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    this.bytes += size;
    if (this.bytes > this.limits.maxBytes) exceeded(this.limits.maxBytes, 'bytes');
    this.parser.write(typeof chunk === 'string' ? chunk : this.utf8.write(chunk));
  }

  end(): DecodedMessage {
    this.parser.write(this.utf8.end());
    this.parser.close();
    if (!this.root) malformed('empty document');
    return this.root;
  }

  private openStart(name: string): void {
    if (this.done) malformed('expected exactly one root element');
    if (++this.elements > this.limits.maxElements) exceeded(this.limits.maxElements, 'elements');
    this.attributes = 0;
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      if (!isSafeName(name)) malformed(`root element ${name} is not allowed`);
      if (this.expectOperation !== undefined && name !== this.expectOperation) {
        throw WireErrors.make('OperationMismatch', { header: this.expectOperation, operation: name });
      }
      this.stack.push({ name, path: '', depth: 0, type: 'o', text: '', fields: undefined, items: undefined });
      return;
    }
    const depth = parent.depth + 1;
    const path = parent.type === 'a' ? `${parent.path}[${parent.items?.length ?? 0}]` : parent.path ? `${parent.path}.${name}` : name;
    if (depth > this.limits.maxDepth) exceeded(this.limits.maxDepth, `levels of nesting (at ${path})`);
    if (parent.type === 'a') {
      if (name !== 'item') malformed(`${parent.path} is an array but holds elements other than <item>`);
      parent.items ??= [];
    } else if (parent.type === 'o') {
      if (!isSafeName(name)) malformed(`element name ${name} is not allowed`);
      parent.fields ??= {};
      if (Object.prototype.hasOwnProperty.call(parent.fields, name)) malformed(`${path} appears more than once`);
    } else {
      malformed(`${parent.path} has type ${parent.type} but contains elements`);
    }
    this.stack.push({ name, path, depth, type: 's', text: '', fields: undefined, items: undefined });
  }

  private attribute(name: string, value: string): void {
    if (++this.attributes > this.limits.maxAttributes) exceeded(this.limits.maxAttributes, 'attributes on one element');
    const f = this.stack[this.stack.length - 1];
    if (!f) return;
    if (f.depth === 0) {
      if (name === 'xmlns' && value !== WIRE_NS) malformed(`unknown namespace ${value}`);
      return;
    }
    if (name !== 't') return; // other attributes carry nothing in this format
    if (!TYPES.has(value)) malformed(`${f.path} has unknown type ${value}`);
    f.type = value as ValueType;
  }

  private text(t: string): void {
    const f = this.stack[this.stack.length - 1];
    if (!f) {
      if (t.trim() !== '') malformed('text outside the root element');
      return;
    }
    if (f.text.length + t.length > this.limits.maxTextChars) exceeded(this.limits.maxTextChars, 'characters of text in one element');
    f.text += t;
  }

  private close(): void {
    const f = this.stack.pop();
    if (!f) return;
    if (f.depth === 0) {
      if (f.text.trim() !== '') malformed('root element holds text');
      this.root = { operation: f.name, body: f.fields ?? {} };
      this.done = true;
      return;
    }
    const hasChildren = f.fields !== undefined || f.items !== undefined;
    if ((f.type === 'a' || f.type === 'o') && f.text.trim() !== '') malformed(`${f.path} mixes text and elements`);
    if (f.type !== 'a' && f.type !== 'o' && hasChildren) malformed(`${f.path} has type ${f.type} but contains elements`);
    const value = valueOf(f);
    const parent = this.stack[this.stack.length - 1];
    if (!parent) return;
    if (parent.type === 'a') (parent.items ??= []).push(value);
    else (parent.fields ??= {})[f.name] = value;
  }
}

/** Decodes a whole document at once (tests, and callers that already hold the text). */
export function decodeDocument(xml: string | Buffer, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodedMessage {
  const d = new WireDecoder(limits);
  d.write(xml);
  return d.end();
}
