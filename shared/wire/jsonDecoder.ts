/**
 * Incremental, bounded decoder of Ferry's compact JSON wire format (jsonCodec.ts): a message is
 * `{"<operation>": {fields}}`. Bytes go in as they arrive (`write`); a byte scanner (no values built)
 * checks every bound as it goes (bytes, values, nesting, characters of one string) and refuses the
 * chunk that crosses one, and the root's name against the operation the header named as soon as it
 * is read. Only a document within its bounds reaches JSON.parse (V8's, native); a walk of the result
 * then refuses what Ferry's XML cannot carry either: names that are not safe element names
 * (`__proto__`, `constructor`, ...), a repeated name in one object, numbers that are not finite.
 * Errors are coded: MalformedJson, JsonLimitExceeded, OperationMismatch.
 */
import { WireErrors } from './errors.js';
import type { DecodedMessage, DecodeLimits } from './wireDecoder.js';
import { isSafeName, type WireObject } from './wireValue.js';

function malformed(detail: string): never {
  throw WireErrors.make('MalformedJson', { detail });
}

function exceeded(limit: number, what: string): never {
  throw WireErrors.make('JsonLimitExceeded', { limit, what });
}

const OBJECT = 1;
const ARRAY = 2;
/** Escape states inside a string: none, after a backslash, then the four hex digits of \uXXXX. */
const NO_ESCAPE = 0;
const AFTER_BACKSLASH = 1;
const HEX_DONE = 6;
/** The root's name is a safe element name (128 characters at most); more is kept only to refuse it. */
const ROOT_NAME_BYTES = 132;

/**
 * Feed it bytes with write(), then call end() for the message. Every method throws a coded
 * FerryError at the first problem; after that the decoder is spent.
 */
export class JsonWireDecoder {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  /** Open containers, innermost last (OBJECT or ARRAY); its length is bounded by maxDepth + 2. */
  private readonly stack: number[] = [];
  private inString = false;
  private escape = NO_ESCAPE;
  /** UTF-16 units of the string being read (what String.length will say). */
  private units = 0;
  private inLiteral = false;
  /** In an object, the next string is a name. */
  private expectName = false;
  private values = 0;
  private members = 0;
  private rootSeen = false;
  /** The root's name, as its bytes arrive; undefined once checked (or when no operation is expected). */
  private rootName: number[] | undefined;
  private readingRootName = false;

  /** expectOperation: the root's name must be this one (checked as soon as it is read). */
  constructor(private readonly limits: DecodeLimits, private readonly expectOperation?: string) {}

  write(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.bytes += buf.length;
    if (this.bytes > this.limits.maxBytes) exceeded(this.limits.maxBytes, 'bytes');
    this.scan(buf);
    this.chunks.push(buf);
  }

  end(): DecodedMessage {
    if (this.bytes === 0) malformed('empty document');
    if (this.inString || this.stack.length > 0) malformed('the document ended inside a value');
    const text = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      malformed((e as Error).message);
    }
    return this.envelope(doc);
  }

  /**
   * The bounds, one byte at a time; structural bytes are ASCII, so UTF-8 needs no decoding here.
   * The hot state lives in locals for the loop (written back at its end; a throw spends the decoder).
   */
  private scan(buf: Buffer): void {
    const maxText = this.limits.maxTextChars;
    const n = buf.length;
    let { inString, escape, units, inLiteral } = this;
    for (let i = 0; i < n; i++) {
      let b = buf[i]!;
      if (inString) {
        if (escape !== NO_ESCAPE) {
          if (escape === AFTER_BACKSLASH) escape = b === 0x75 /* u */ ? AFTER_BACKSLASH + 1 : NO_ESCAPE;
          else if (++escape === HEX_DONE) escape = NO_ESCAPE;
          if (this.readingRootName) this.rootByte(b);
          continue;
        }
        if (!this.readingRootName) {
          // The run of plain characters up to the next quote or backslash.
          while (b !== 0x22 && b !== 0x5c) {
            // A lead byte or ASCII is one character: two UTF-16 units from U+10000 on (a 4-byte sequence).
            if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
            if (++i === n) break;
            b = buf[i]!;
          }
          if (units > maxText) exceeded(maxText, 'characters in one string');
          if (i === n) break;
        }
        if (b === 0x22 /* " */) {
          inString = false;
          if (this.readingRootName) this.rootNameRead();
          continue;
        }
        if (b === 0x5c /* \ */) {
          escape = AFTER_BACKSLASH;
          units++;
        } else if ((b & 0xc0) !== 0x80) {
          units += b >= 0xf0 ? 2 : 1;
        }
        if (units > maxText) exceeded(maxText, 'characters in one string');
        if (this.readingRootName) this.rootByte(b);
        continue;
      }
      switch (b) {
        case 0x20: case 0x09: case 0x0a: case 0x0d:
          inLiteral = false;
          break;
        case 0x7b: /* { */
          inLiteral = false;
          this.valueStarts();
          this.stack.push(OBJECT);
          this.expectName = true;
          break;
        case 0x5b: /* [ */
          inLiteral = false;
          this.valueStarts();
          this.stack.push(ARRAY);
          break;
        case 0x7d: /* } */
        case 0x5d: /* ] */
          inLiteral = false;
          if (this.stack.pop() !== (b === 0x7d ? OBJECT : ARRAY)) malformed(`unexpected ${String.fromCharCode(b)}`);
          break;
        case 0x2c: /* , */
          inLiteral = false;
          if (this.stack[this.stack.length - 1] === OBJECT) this.expectName = true;
          break;
        case 0x3a: /* : */
          inLiteral = false;
          this.members++;
          break;
        case 0x22: /* " */
          inLiteral = false;
          inString = true;
          units = 0;
          if (this.expectName && this.stack[this.stack.length - 1] === OBJECT) {
            this.expectName = false;
            if (this.stack.length === 1 && this.members === 0 && this.expectOperation !== undefined) this.startRootName();
          } else {
            this.valueStarts();
          }
          break;
        default:
          // A number, true, false or null (or junk JSON.parse will refuse): one value per run of such bytes.
          if (!inLiteral) {
            inLiteral = true;
            this.valueStarts();
          }
      }
    }
    this.inString = inString;
    this.escape = escape;
    this.units = units;
    this.inLiteral = inLiteral;
  }

  /** A value opens at the current nesting: the envelope (depth -1), the root (0), its fields (1), ... */
  private valueStarts(): void {
    const depth = this.stack.length - 1;
    if (depth < 0) {
      if (this.rootSeen) malformed('expected exactly one root value');
      this.rootSeen = true;
      return;
    }
    if (depth > this.limits.maxDepth) exceeded(this.limits.maxDepth, 'levels of nesting');
    // The root and every value below it, as the XML decoder counts the root and every element.
    if (++this.values > this.limits.maxElements) exceeded(this.limits.maxElements, 'values');
  }

  private startRootName(): void {
    this.readingRootName = true;
    this.rootName = [];
  }

  private rootByte(b: number): void {
    const name = this.rootName!;
    if (name.length < ROOT_NAME_BYTES) name.push(b);
  }

  private rootNameRead(): void {
    this.readingRootName = false;
    const name = Buffer.from(this.rootName!).toString('utf8');
    this.rootName = undefined;
    // An escaped name is compared after JSON.parse, in envelope().
    if (name.includes('\\')) return;
    if (name !== this.expectOperation) throw WireErrors.make('OperationMismatch', { header: this.expectOperation ?? '', operation: name.slice(0, 128) });
  }

  private envelope(doc: unknown): DecodedMessage {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) malformed('the document is not an object');
    const names = Object.keys(doc);
    const operation = names[0];
    if (names.length !== 1 || operation === undefined) malformed('the document must hold exactly one operation');
    if (!isSafeName(operation)) malformed(`root ${operation.slice(0, 128)} is not allowed`);
    if (this.expectOperation !== undefined && operation !== this.expectOperation) {
      throw WireErrors.make('OperationMismatch', { header: this.expectOperation, operation });
    }
    const body = (doc as Record<string, unknown>)[operation];
    if (typeof body !== 'object' || body === null || Array.isArray(body)) malformed(`${operation} is not an object`);
    // The envelope's one name plus every name below it: fewer own names than names read is a repeated one.
    const counted = 1 + checkObject(body as Record<string, unknown>, '');
    if (counted !== this.members) malformed('a name appears more than once in one object');
    return { operation, body: body as WireObject };
  }
}

/** Checks every name and number below `obj`; returns how many names it holds. */
function checkObject(obj: Record<string, unknown>, path: string): number {
  let names = 0;
  for (const k of Object.keys(obj)) {
    names++;
    if (!isSafeName(k)) malformed(`name ${path ? `${path}.` : ''}${k.slice(0, 128)} is not allowed`);
    names += checkValue(obj[k], path, k);
  }
  return names;
}

function checkValue(v: unknown, parent: string, key: string | number): number {
  switch (typeof v) {
    case 'string': case 'boolean': return 0;
    case 'number':
      if (!Number.isFinite(v)) malformed(`${pathOf(parent, key)} is not a finite number`);
      return 0;
    case 'object': {
      if (v === null) return 0;
      const path = pathOf(parent, key);
      if (!Array.isArray(v)) return checkObject(v as Record<string, unknown>, path);
      let names = 0;
      for (let i = 0; i < v.length; i++) names += checkValue((v as unknown[])[i], path, i);
      return names;
    }
    default:
      return malformed(`${pathOf(parent, key)} is not a wire value`);
  }
}

function pathOf(parent: string, key: string | number): string {
  return typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key;
}

/** Decodes a whole document at once (tests, and callers that already hold the text). */
export function decodeJsonDocument(json: string | Buffer, limits: DecodeLimits, expectOperation?: string): { operation: string; body: WireObject } {
  const d = new JsonWireDecoder(limits, expectOperation);
  d.write(json);
  return d.end();
}
