/**
 * The compact JSON encoding, held to what the typed XML is held to (xmlCodec.test.ts,
 * wireDecoder.test.ts): lossless round trip of any wire object; any bytes, fed in any chunks, give a
 * message or one of the decoder's coded errors; every bound refused by the chunk that crosses it;
 * nothing comes out that the XML could not carry (prototype names, repeated names, non-finite numbers).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FerryError, isFerryError } from '../../../shared/errors/registry.js';
import { decodeJsonMessage, encodeJsonMessage } from '../../../shared/wire/jsonCodec.js';
import { JsonWireDecoder, decodeJsonDocument } from '../../../shared/wire/jsonDecoder.js';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits } from '../../../shared/wire/wireDecoder.js';
import { decodeMessage, encodeMessage, type WireObject, type WireValue } from '../../../shared/wire/xmlCodec.js';

const DECODER_CODES = ['MalformedJson', 'JsonLimitExceeded'];
const small: DecodeLimits = { maxBytes: 4096, maxElements: 64, maxAttributes: 4, maxDepth: 8, maxTextChars: 256 };

const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,12}$/).filter((k) => !(k in Object.prototype));
const wireValue: fc.Arbitrary<WireValue> = fc.letrec<{ v: WireValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ unit: 'binary', maxLength: 10 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
  ),
})).v;
const wireObject = fc.dictionary(key, wireValue, { maxKeys: 6 }) as fc.Arbitrary<WireObject>;

/** Feeds `bytes` cut at the given offsets; the message, or the error's code and the end of the chunk that raised it. */
function feed(bytes: Buffer, cuts: readonly number[], limits: DecodeLimits = small, expect?: string): { ok: true; body: unknown } | { ok: false; code: string; fed: number } {
  const d = new JsonWireDecoder(limits, expect);
  let fed = 0;
  try {
    for (const cut of [...cuts, bytes.length]) {
      const start = fed;
      fed = Math.min(bytes.length, Math.max(fed, cut));
      d.write(bytes.subarray(start, fed));
    }
    return { ok: true, body: d.end().body };
  } catch (e) {
    if (!isFerryError(e)) throw e;
    return { ok: false, code: e.code, fed };
  }
}

function measure(v: unknown): { values: number; longest: number; depth: number } {
  if (typeof v === 'string') return { values: 1, longest: v.length, depth: 0 };
  if (v === null || typeof v !== 'object') return { values: 1, longest: 0, depth: 0 };
  const kids = Array.isArray(v) ? v : Object.values(v);
  const m = kids.map(measure);
  return {
    values: 1 + m.reduce((n, x) => n + x.values, 0),
    longest: Math.max(0, ...m.map((x) => x.longest)),
    depth: 1 + Math.max(0, ...m.map((x) => x.depth)),
  };
}

const cuts = fc.array(fc.nat({ max: 5000 }), { maxLength: 6 }).map((xs) => [...xs].sort((a, b) => a - b));

/** Bytes that are nearly Ferry wire JSON: a real message with a slice replaced by random bytes or tokens. */
const mangled = fc.tuple(
  fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.array(fc.boolean(), { maxLength: 5 })), { maxKeys: 8 }),
  fc.nat(), fc.nat({ max: 40 }),
  fc.oneof(fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', '"__proto__":{}', '"constructor":1', '1e999', '\\u0000', '\\ud800', '{"a":1,"a":2}', 'null').map((s) => Buffer.from(s))),
).map(([body, at, len, junk]) => {
  const doc = Buffer.from(encodeJsonMessage('ccNodeEvent', body as Record<string, WireValue>));
  const start = at % (doc.length + 1);
  return Buffer.concat([doc.subarray(0, start), junk, doc.subarray(Math.min(doc.length, start + len))]);
});

describe('compact JSON codec', () => {
  it('round-trips any wire object losslessly, as the typed XML does', () => {
    fc.assert(fc.property(wireObject, (body) => {
      const decoded = decodeJsonMessage(encodeJsonMessage('ncTest', body));
      expect(decoded).toEqual({ operation: 'ncTest', body });
    }), { numRuns: 300 });
  });

  it('decodes to what the XML decodes to, for what the XML carries losslessly', async () => {
    await fc.assert(fc.asyncProperty(wireObject.filter((b) => JSON.stringify(b).isWellFormed()), async (body) => {
      expect(decodeJsonMessage(encodeJsonMessage('op', body)).body).toEqual((await decodeMessage(encodeMessage('op', body))).body);
    }), { numRuns: 200 });
  });

  it('keeps one-element arrays, numeric strings and empty values apart', () => {
    const body = { a: ['x'], b: '5', c: 5, d: '', e: [], f: {}, g: null, h: 'true', i: true, j: ' padded ' };
    expect(decodeJsonMessage(encodeJsonMessage('op', body)).body).toEqual(body);
  });

  it('refuses to encode what the XML encoder refuses', () => {
    for (const body of [{ 'bad key': 1 }, { n: Number.NaN }, { n: Number.POSITIVE_INFINITY }, { constructor: 1 }, { a: [undefined] }] as unknown as WireObject[]) {
      expect(() => encodeJsonMessage('op', body)).toThrow(FerryError);
      expect(() => encodeMessage('op', body)).toThrow(FerryError);
    }
    let deep: WireValue = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => encodeJsonMessage('op', { deep })).toThrow(expect.objectContaining({ code: 'InvalidParameter' }));
    expect(() => encodeJsonMessage('__proto__', {})).toThrow(expect.objectContaining({ code: 'InvalidParameter' }));
  });
});

describe('JsonWireDecoder: any input', () => {
  it('gives any bytes, in any chunks, a message or a coded decoder error, never a crash', () => {
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 3000 }).map((b) => Buffer.from(b)), mangled), cuts, (bytes, at) => {
      const r = feed(bytes, at);
      if (!r.ok) expect(DECODER_CODES).toContain(r.code);
    }), { numRuns: 2000 });
  });

  it('decodes the same message whatever the chunks (a multi-byte character or an escape split included)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), cuts, (text, at) => {
      const doc = Buffer.from(encodeJsonMessage('op', { text, n: 5, list: [text, 'a"b\\c\n\u0001'] }));
      expect(feed(doc, at, DEFAULT_DECODE_LIMITS)).toEqual({ ok: true, body: { text, n: 5, list: [text, 'a"b\\c\n\u0001'] } });
    }), { numRuns: 300 });
  });

  it('never lets out more than its limits let in', () => {
    fc.assert(fc.property(mangled, (bytes) => {
      const r = feed(bytes, []);
      if (!r.ok) return;
      const m = measure(r.body);
      expect(m.values).toBeLessThanOrEqual(small.maxElements);
      expect(m.longest).toBeLessThanOrEqual(small.maxTextChars);
      expect(m.depth).toBeLessThanOrEqual(small.maxDepth + 1);
    }), { numRuns: 1000 });
  });
});

describe('JsonWireDecoder: every bound is enforced where it is crossed', () => {
  /** A document of n nulls in one array. */
  const items = (n: number): Buffer => Buffer.from(`{"op":{"a":[${Array.from({ length: n }, () => 'null').join(',')}]}}`);

  it('refuses the value past maxElements in the chunk that holds it, not at the end of the document', () => {
    fc.assert(fc.property(fc.integer({ min: 70, max: 5000 }), fc.integer({ min: 13, max: 400 }), (n, chunk) => {
      const doc = items(n);
      const chunks = Array.from({ length: Math.ceil(doc.length / chunk) }, (_, i) => (i + 1) * chunk);
      const r = feed(doc, chunks, { ...small, maxBytes: Number.POSITIVE_INFINITY });
      expect(r).toMatchObject({ ok: false, code: 'JsonLimitExceeded' });
      // The root, `a` and 62 nulls fit; the 63rd null starts at byte 12 + 62 * 5.
      const crossing = 12 + 62 * 5 + 1;
      expect((r as { fed: number }).fed).toBeLessThanOrEqual(Math.ceil(crossing / chunk) * chunk);
    }), { numRuns: 200 });
  });

  it('refuses a nesting bomb within its first bytes', () => {
    const r = feed(Buffer.from(`{"op":${'['.repeat(100_000)}`), [64], { ...small, maxBytes: Number.POSITIVE_INFINITY });
    expect(r).toEqual({ ok: false, code: 'JsonLimitExceeded', fed: 64 });
  });

  it.each<[string, string, string, string]>([
    ['bytes', `{"op":{"a":"${' '.repeat(5000)}"}}`, 'JsonLimitExceeded', '4096 bytes'],
    ['values', `{"op":{"a":[${Array(100).fill('1').join(',')}]}}`, 'JsonLimitExceeded', '64 values'],
    ['names', `{"op":{${Array.from({ length: 100 }, (_, i) => `"k${i}":1`).join(',')}}}`, 'JsonLimitExceeded', '64 values'],
    ['text', `{"op":{"a":"${'x'.repeat(300)}"}}`, 'JsonLimitExceeded', '256 characters'],
    ['text written as escapes', `{"op":{"a":"${'\\u0078'.repeat(257)}"}}`, 'JsonLimitExceeded', '256 characters'],
    ['text of characters beyond the BMP', `{"op":{"a":"${'😀'.repeat(129)}"}}`, 'JsonLimitExceeded', '256 characters'],
    ['a long name', `{"op":{"${'x'.repeat(300)}":1}}`, 'JsonLimitExceeded', '256 characters'],
    ['depth', `{"op":${'{"a":'.repeat(9)}1${'}'.repeat(9)}}`, 'JsonLimitExceeded', '8 levels of nesting'],
    ['a __proto__ name', '{"op":{"__proto__":{"polluted":true}}}', 'MalformedJson', '__proto__'],
    ['a constructor name', '{"op":{"a":{"constructor":{"prototype":1}}}}', 'MalformedJson', 'a.constructor'],
    ['a prototype root', '{"__proto__":{}}', 'MalformedJson', '__proto__'],
    ['a name JSON allows and XML does not', '{"op":{"bad key":1}}', 'MalformedJson', 'bad key'],
    ['a repeated name', '{"op":{"a":1,"a":2}}', 'MalformedJson', 'more than once'],
    ['a repeated name, deeper', '{"op":{"x":[{"a":1,"b":{"c":1,"c":2}}]}}', 'MalformedJson', 'more than once'],
    ['a number JSON.parse makes infinite', '{"op":{"a":1e999}}', 'MalformedJson', 'a is not a finite number'],
    ['a second root', '{"op":{}}{"op":{}}', 'MalformedJson', 'one root'],
    ['two operations', '{"op":{},"op2":{}}', 'MalformedJson', 'exactly one operation'],
    ['a body that is not an object', '{"op":[1]}', 'MalformedJson', 'not an object'],
    ['a document that is not an object', '[{"op":{}}]', 'MalformedJson', 'not an object'],
    ['unbalanced brackets', '{"op":{]}', 'MalformedJson', 'unexpected ]'],
    ['a truncated document', '{"op":{"a":"x', 'MalformedJson', 'ended inside'],
    ['an empty document', '', 'MalformedJson', 'empty document'],
    ['a byte-order mark', '\ufeff{"op":{}}', 'MalformedJson', ''],
    ['XML', '<op xmlns="urn:ferry:wire:1"/>', 'MalformedJson', ''],
  ])('refuses %s with %s', (_n, json, code, mention) => {
    expect(() => decodeJsonDocument(json, small)).toThrow(expect.objectContaining({ code, message: expect.stringContaining(mention) }));
  });

  it('refuses a root other than the one the header named as soon as its name is read', () => {
    const d = new JsonWireDecoder(small, 'ccNodeEvent');
    expect(() => d.write('{"ccModifyNode" ')).toThrow(expect.objectContaining({ code: 'OperationMismatch' }));
    // Written with escapes, it is compared once parsed.
    expect(() => decodeJsonDocument('{"ccModify\\u004eode":{}}', small, 'ccNodeEvent')).toThrow(expect.objectContaining({ code: 'OperationMismatch' }));
    expect(decodeJsonDocument('{"ccNodeEven\\u0074":{}}', small, 'ccNodeEvent')).toEqual({ operation: 'ccNodeEvent', body: {} });
  });

  it('accepts what the encoder writes at the limits exactly', () => {
    const doc = encodeJsonMessage('op', { a: 'x'.repeat(256) });
    expect(decodeJsonDocument(doc, { ...small, maxElements: 2 }).body).toEqual({ a: 'x'.repeat(256) });
    let deep: WireValue = [];
    for (let i = 1; i < small.maxDepth; i++) deep = [deep];
    expect(decodeJsonDocument(encodeJsonMessage('op', { deep }), small).body).toEqual({ deep });
  });

  it('gives a decoded object no inherited surprises: every name is its own, none is the prototype\'s', () => {
    const { body } = decodeJsonDocument('{"op":{"a":{"b":1}}}', small);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
