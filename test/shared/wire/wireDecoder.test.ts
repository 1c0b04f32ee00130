/**
 * The streaming decoder's bounds. Properties: any bytes, fed in any chunks, give a message or one of
 * the decoder's coded errors; a document over a bound is refused by the chunk that crosses it (so
 * the work done is bounded by the limit, not by the document); and what comes out never holds more
 * than the limits let in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFerryError } from '../../../shared/errors/registry.js';
import { DEFAULT_DECODE_LIMITS, WireDecoder, decodeDocument, type DecodeLimits } from '../../../shared/wire/wireDecoder.js';
import { encodeMessage, type WireValue } from '../../../shared/wire/xmlCodec.js';

const DECODER_CODES = ['MalformedXml', 'XmlLimitExceeded'];
const small: DecodeLimits = { maxBytes: 4096, maxElements: 64, maxAttributes: 4, maxDepth: 8, maxTextChars: 256 };

/** Feeds `bytes` cut at the given offsets; the message, or the error's code and the end of the chunk that raised it. */
function feed(bytes: Buffer, cuts: readonly number[], limits: DecodeLimits = small): { ok: true; body: unknown } | { ok: false; code: string; fed: number } {
  const d = new WireDecoder(limits);
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

/** Elements and longest text of a decoded value. */
function measure(v: unknown): { elements: number; longest: number; depth: number } {
  if (typeof v === 'string') return { elements: 1, longest: v.length, depth: 0 };
  if (v === null || typeof v !== 'object') return { elements: 1, longest: 0, depth: 0 };
  const kids = Array.isArray(v) ? v : Object.values(v);
  const m = kids.map(measure);
  return {
    elements: 1 + m.reduce((n, x) => n + x.elements, 0),
    longest: Math.max(0, ...m.map((x) => x.longest)),
    depth: 1 + Math.max(0, ...m.map((x) => x.depth)),
  };
}

const cuts = fc.array(fc.nat({ max: 5000 }), { maxLength: 6 }).map((xs) => [...xs].sort((a, b) => a - b));

/** Bytes that are nearly Ferry wire XML: a real message with a slice replaced by random bytes or tags. */
const mangled = fc.tuple(
  fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.array(fc.boolean(), { maxLength: 5 })), { maxKeys: 8 }),
  fc.nat(), fc.nat({ max: 40 }),
  fc.oneof(fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)), fc.constantFrom('<', '>', '</a>', '<item>', ' t="q"', '&amp;', '&#0;', '<!DOCTYPE x>', ']]>', '<![CDATA[', '<?pi?>').map((s) => Buffer.from(s))),
).map(([body, at, len, junk]) => {
  const doc = Buffer.from(encodeMessage('ccNodeEvent', body as Record<string, WireValue>));
  const start = at % (doc.length + 1);
  return Buffer.concat([doc.subarray(0, start), junk, doc.subarray(Math.min(doc.length, start + len))]);
});

describe('WireDecoder: any input', () => {
  it('gives any bytes, in any chunks, a message or a coded decoder error, never a crash', () => {
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 3000 }).map((b) => Buffer.from(b)), mangled), cuts, (bytes, at) => {
      const r = feed(bytes, at);
      if (!r.ok) expect(DECODER_CODES).toContain(r.code);
    }), { numRuns: 2000 });
  });

  it('decodes the same message whatever the chunks (a multi-byte character split included)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), cuts, (text, at) => {
      const doc = Buffer.from(encodeMessage('op', { text, n: 5, list: [text] }));
      expect(feed(doc, at, DEFAULT_DECODE_LIMITS)).toEqual({ ok: true, body: { text, n: 5, list: [text] } });
    }), { numRuns: 300 });
  });

  it('never lets out more than its limits let in', () => {
    fc.assert(fc.property(mangled, (bytes) => {
      const r = feed(bytes, []);
      if (!r.ok) return;
      const m = measure(r.body);
      expect(m.elements).toBeLessThanOrEqual(small.maxElements);
      expect(m.longest).toBeLessThanOrEqual(small.maxTextChars);
      expect(m.depth).toBeLessThanOrEqual(small.maxDepth + 1);
    }), { numRuns: 1000 });
  });
});

describe('WireDecoder: every bound is enforced where it is crossed', () => {
  /** A document of n empty items, cut into 100-byte chunks. */
  const items = (n: number): Buffer => Buffer.from(`<op xmlns="urn:ferry:wire:1"><a t="a">${'<item t="z"/>'.repeat(n)}</a></op>`);

  it('refuses the element past maxElements in the chunk that holds it, not at the end of the document', () => {
    fc.assert(fc.property(fc.integer({ min: 70, max: 5000 }), fc.integer({ min: 13, max: 400 }), (n, chunk) => {
      const doc = items(n);
      const chunks = Array.from({ length: Math.ceil(doc.length / chunk) }, (_, i) => (i + 1) * chunk);
      const r = feed(doc, chunks, { ...small, maxBytes: Number.POSITIVE_INFINITY });
      expect(r).toMatchObject({ ok: false, code: 'XmlLimitExceeded' });
      // <op>, <a> and 62 items fit; the 63rd item starts at byte 38 + 62 * 13 and ends 13 bytes later.
      const crossing = 38 + 63 * 13;
      expect((r as { fed: number }).fed).toBeLessThanOrEqual(Math.ceil(crossing / chunk) * chunk);
    }), { numRuns: 200 });
  });

  it.each<[string, string, Partial<DecodeLimits>, string, string]>([
    ['bytes', `<op>${' '.repeat(5000)}</op>`, {}, 'XmlLimitExceeded', '4096 bytes'],
    ['elements', `<op><a t="a">${'<item/>'.repeat(100)}</a></op>`, {}, 'XmlLimitExceeded', '64 elements'],
    ['attributes', '<op><a t="s" b="1" c="2" d="3" e="4">x</a></op>', {}, 'XmlLimitExceeded', '4 attributes'],
    ['text', `<op><a>${'x'.repeat(300)}</a></op>`, {}, 'XmlLimitExceeded', '256 characters'],
    ['text split by CDATA', `<op><a>${'x'.repeat(200)}<![CDATA[${'y'.repeat(100)}]]></a></op>`, {}, 'XmlLimitExceeded', '256 characters'],
    ['depth', `<op>${'<a t="o">'.repeat(9)}${'</a>'.repeat(9)}</op>`, {}, 'XmlLimitExceeded', '8 levels of nesting'],
    ['a DOCTYPE', '<!DOCTYPE op [<!ENTITY x "y">]><op/>', {}, 'MalformedXml', 'DOCTYPE'],
    ['an HTML entity', '<op><a>&nbsp;</a></op>', {}, 'MalformedXml', 'entity'],
    ['a processing instruction', '<op><?evil x?></op>', {}, 'MalformedXml', 'processing instruction'],
    ['a second root', '<op/><op/>', {}, 'MalformedXml', ''],
    ['an empty document', '', {}, 'MalformedXml', 'empty document'],
  ])('refuses %s with %s', (_n, xml, over, code, mention) => {
    expect(() => decodeDocument(xml, { ...small, ...over })).toThrow(expect.objectContaining({ code, message: expect.stringContaining(mention) }));
  });

  it('refuses a root other than the one the header named as soon as its name is read', () => {
    const d = new WireDecoder(small, 'ccNodeEvent');
    expect(() => d.write('<ccModifyNode xmlns="urn:ferry:wire:1"><host>')).toThrow(expect.objectContaining({ code: 'OperationMismatch' }));
  });

  it('accepts what the encoder writes at the limits exactly', () => {
    const doc = encodeMessage('op', { a: 'x'.repeat(256) });
    expect(decodeDocument(doc, { ...small, maxElements: 2 }).body).toEqual({ a: 'x'.repeat(256) });
  });
});
