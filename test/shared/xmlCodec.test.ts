import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeMessage, encodeMessage, type WireObject, type WireValue } from '../../shared/wire/xmlCodec.js';
import { FerryError } from '../../shared/errors/registry.js';

const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,12}$/).filter((k) => !(k in Object.prototype));
const wireValue: fc.Arbitrary<WireValue> = fc.letrec<{ v: WireValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ unit: 'binary', maxLength: 10 }).filter((s) => s.isWellFormed()),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
  ),
})).v;
const wireObject = fc.dictionary(key, wireValue, { maxKeys: 6 }) as fc.Arbitrary<WireObject>;

describe('typed XML codec', () => {
  it('round-trips any wire object losslessly', async () => {
    await fc.assert(fc.asyncProperty(wireObject, async (body) => {
      const decoded = await decodeMessage(encodeMessage('ncTest', body));
      expect(decoded.operation).toBe('ncTest');
      expect(decoded.body).toEqual(body);
    }), { numRuns: 300 });
  });

  it('keeps one-element arrays, numeric strings and empty values apart', async () => {
    const body = { a: ['x'], b: '5', c: 5, d: '', e: [], f: {}, g: null, h: 'true', i: true, j: ' padded ' };
    expect((await decodeMessage(encodeMessage('op', body))).body).toEqual(body);
  });

  it('gives any input bytes either a message or a MalformedXml error, never a crash', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ maxLength: 200 }), async (text) => {
      try {
        await decodeMessage(text);
      } catch (e) {
        expect(e).toBeInstanceOf(FerryError);
        expect((e as FerryError).code).toBe('MalformedXml');
      }
    }), { numRuns: 500 });
  });

  it.each([
    ['not xml', 'hello'],
    ['two values for one key', '<op><a>1</a><a>2</a></op>'],
    ['bad number', '<op><a t="n">five</a></op>'],
    ['bad boolean', '<op><a t="b">yes</a></op>'],
    ['unknown type', '<op><a t="q">1</a></op>'],
    ['array with non-item child', '<op><a t="a"><x>1</x></a></op>'],
    ['scalar with children', '<op><a><b>1</b></a></op>'],
    ['prototype element name', '<op><constructor>1</constructor></op>'],
    ['foreign namespace', '<op xmlns="urn:other"><a>1</a></op>'],
    ['text at root', '<op>loose</op>'],
    ['bad base64', '<op><a t="x">!!</a></op>'],
  ])('rejects %s with MalformedXml', async (_name, xml) => {
    await expect(decodeMessage(xml)).rejects.toMatchObject({ code: 'MalformedXml' });
  });

  it('refuses to encode names XML cannot carry', () => {
    expect(() => encodeMessage('op', { 'bad key': 1 })).toThrow(FerryError);
    expect(() => encodeMessage('op', { n: Number.NaN })).toThrow(FerryError);
  });
});
