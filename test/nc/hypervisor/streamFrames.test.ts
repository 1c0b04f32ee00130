import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ControlMessage } from '../../../nc/hypervisor/sim/protocol.js';
import {
  encodeControl, encodePages, FrameDecoder, payloadBytesFor, StreamAssembler, type Frame,
} from '../../../nc/hypervisor/sim/streamFrames.js';
import { FerryError } from '../../../shared/errors/registry.js';

const spec = { id: 'i-00000001', imageId: 'emi-1', resources: { cores: 1, memoryMiB: 64, diskGiB: 1 } };
const hello: ControlMessage = { t: 'hello', migrationId: 'm-1', spec, sourceHost: '127.0.9.1' };

type Item = { kind: 'control'; message: ControlMessage } | { kind: 'pages'; length: number };

const arbItem: fc.Arbitrary<Item> = fc.oneof(
  fc.constant<Item>({ kind: 'control', message: hello }),
  fc.record({ iteration: fc.integer({ min: 1, max: 1000 }), bytes: fc.integer({ min: 0, max: 1e9 }) })
    .map(({ iteration, bytes }): Item => ({ kind: 'control', message: { t: 'round', iteration, bytes, payloadBytes: payloadBytesFor(bytes) } })),
  fc.integer({ min: 0, max: 1e6 }).map((diskCounter): Item => ({ kind: 'control', message: { t: 'final', diskCounter } })),
  fc.integer({ min: 1, max: 5000 }).map((length): Item => ({ kind: 'pages', length })),
);

function encode(item: Item): Buffer {
  return item.kind === 'control' ? encodeControl(item.message) : encodePages(item.length);
}

/** Splits `buf` at the given cut points. */
function cut(buf: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (buf.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let prev = 0;
  for (const p of at) {
    parts.push(buf.subarray(prev, p));
    prev = p;
  }
  parts.push(buf.subarray(prev));
  return parts;
}

describe('FrameDecoder', () => {
  it('decodes what was encoded, however the bytes are split', () => {
    fc.assert(fc.property(fc.array(arbItem, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), (items, points) => {
      const d = new FrameDecoder('test');
      const frames: Frame[] = [];
      for (const part of cut(Buffer.concat(items.map(encode)), points)) frames.push(...d.push(part));
      d.end();
      expect(frames).toEqual(items);
    }));
  });

  it('any bytes give frames or a HypervisorProtocolError, never another failure', () => {
    // Half the cases start with a plausible header so the fuzz reaches the payload checks.
    const plausible = fc.tuple(fc.constantFrom(0x43, 0x50), fc.integer({ min: 0, max: 200 }), fc.uint8Array({ maxLength: 250 }))
      .map(([kind, len, rest]) => Uint8Array.from([kind, 0, 0, 0, len, ...rest]));
    fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), plausible), (bytes) => {
      const d = new FrameDecoder('fuzz');
      try {
        d.push(bytes);
        d.end();
      } catch (e) {
        expect(e).toBeInstanceOf(FerryError);
        expect((e as FerryError).code).toBe('HypervisorProtocolError');
      }
    }));
  });

  it.each([
    ['unknown kind', Buffer.from([0x58, 0, 0, 0, 1, 0])],
    ['oversized control frame', Buffer.from([0x43, 0, 2, 0, 0])],
    ['oversized page frame', Buffer.from([0x50, 0, 0x20, 0, 0])],
    ['control frame that is not JSON', Buffer.concat([Buffer.from([0x43, 0, 0, 0, 3]), Buffer.from('{x}')])],
    ['control frame of an unknown message', encodeControl({ t: 'bogus' } as unknown as ControlMessage)],
  ])('rejects %s', (_name, bytes) => {
    expect(() => new FrameDecoder('t').push(bytes)).toThrowError(expect.objectContaining({ code: 'HypervisorProtocolError' }));
  });

  it('rejects a stream cut inside a frame', () => {
    const d = new FrameDecoder('t');
    d.push(encodePages(10).subarray(0, 7));
    expect(() => d.end()).toThrowError(expect.objectContaining({ code: 'HypervisorProtocolError' }));
  });
});

describe('StreamAssembler', () => {
  const round = (iteration: number, bytes: number): Frame =>
    ({ kind: 'control', message: { t: 'round', iteration, bytes, payloadBytes: payloadBytesFor(bytes) } });
  const final: Frame = { kind: 'control', message: { t: 'final', diskCounter: 7 } };
  const h: Frame = { kind: 'control', message: hello };
  const pages = (length: number): Frame => ({ kind: 'pages', length });

  it('yields hello, each round once its pages are in, then final', () => {
    const a = new StreamAssembler('t');
    const steps = [h, round(1, 4096), pages(3), pages(1), round(2, 0), final].map((f) => a.accept(f)?.kind);
    expect(steps).toEqual(['hello', undefined, undefined, 'round', 'round', 'final']);
    expect(a.finished).toBe(true);
  });

  it.each<[string, Frame[]]>([
    ['a round before hello', [round(1, 0)]],
    ['pages outside a round', [h, pages(1)]],
    ['a skipped round number', [h, round(2, 0)]],
    ['more pages than announced', [h, round(1, 1024), pages(2)]],
    ['a control frame inside page data', [h, round(1, 4096), pages(1), final]],
    ['a wrong payload size for the round', [h, { kind: 'control', message: { t: 'round', iteration: 1, bytes: 4096, payloadBytes: 1 } }]],
    ['a second hello', [h, h]],
    ['anything after final', [h, final, round(1, 0)]],
  ])('rejects %s', (_name, frames) => {
    const a = new StreamAssembler('t');
    expect(() => frames.forEach((f) => a.accept(f))).toThrowError(expect.objectContaining({ code: 'HypervisorProtocolError' }));
  });
});
