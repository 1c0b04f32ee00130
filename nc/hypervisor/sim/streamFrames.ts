/**
 * Framing of the daemon ↔ daemon migration stream: one HTTP request body carries the whole
 * migration, like QEMU's single migration socket. A frame is `[kind u8][length u32 BE][payload]`;
 * kind 'C' holds a JSON control message (hello, round, final), kind 'P' holds page bytes that stand
 * for guest memory, scaled down by PAGE_SCALE so a 16 GiB guest sends 16 MiB, not 16 GiB.
 *
 * Decoding is pure: any byte sequence yields frames or a HypervisorProtocolError, never a crash.
 */
import { HypervisorErrors } from '../errors.js';
import { ControlMessage, describeIssues, type FinalMessage, type HelloMessage, type RoundMessage } from './protocol.js';

/** Guest memory bytes represented by one wire byte of page data (1 byte per KiB). */
export const PAGE_SCALE = 1024;
const KIND_CONTROL = 0x43; // 'C'
const KIND_PAGES = 0x50; // 'P'
const HEADER_BYTES = 5;
export const MAX_CONTROL_BYTES = 64 * 1024;
export const MAX_PAGE_FRAME_BYTES = 1024 * 1024;

export type Frame =
  | { readonly kind: 'control'; readonly message: ControlMessage }
  | { readonly kind: 'pages'; readonly length: number };

export function payloadBytesFor(guestBytes: number): number {
  return Math.ceil(guestBytes / PAGE_SCALE);
}

function header(kind: number, length: number): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt8(kind, 0);
  h.writeUInt32BE(length, 1);
  return h;
}

export function encodeControl(message: ControlMessage): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([header(KIND_CONTROL, body.length), body]);
}

/** A page frame of `length` bytes (the content is a fixed pattern: only the count matters). */
export function encodePages(length: number): Buffer {
  if (length < 1 || length > MAX_PAGE_FRAME_BYTES) throw new RangeError(`page frame of ${length} bytes`);
  return Buffer.concat([header(KIND_PAGES, length), Buffer.alloc(length, 0xa5)]);
}

/** Incremental decoder; feed it chunks as they arrive, in any split. */
export class FrameDecoder {
  private head = Buffer.alloc(0);
  private kind = 0;
  private length = 0;
  private need = 0;
  private control: Buffer[] = [];
  private inPayload = false;

  /** `peer` names the other end in errors. */
  constructor(private readonly peer: string) {}

  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (buf.length > 0) {
      if (!this.inPayload) {
        const take = Math.min(HEADER_BYTES - this.head.length, buf.length);
        this.head = Buffer.concat([this.head, buf.subarray(0, take)]);
        buf = buf.subarray(take);
        if (this.head.length === HEADER_BYTES) this.startFrame();
        continue;
      }
      const take = Math.min(this.need, buf.length);
      if (this.kind === KIND_CONTROL) this.control.push(Buffer.from(buf.subarray(0, take)));
      this.need -= take;
      buf = buf.subarray(take);
      if (this.need === 0) frames.push(this.endFrame());
    }
    return frames;
  }

  /** The stream ended: a frame cut in the middle is a protocol error. */
  end(): void {
    if (this.inPayload || this.head.length > 0) throw this.error('stream ended inside a frame');
  }

  private startFrame(): void {
    this.kind = this.head.readUInt8(0);
    this.length = this.head.readUInt32BE(1);
    this.head = Buffer.alloc(0);
    // Lengths are bounded before anything is buffered, so a hostile length cannot exhaust memory.
    if (this.kind === KIND_CONTROL) {
      if (this.length < 2 || this.length > MAX_CONTROL_BYTES) throw this.error(`control frame of ${this.length} bytes`);
    } else if (this.kind === KIND_PAGES) {
      if (this.length < 1 || this.length > MAX_PAGE_FRAME_BYTES) throw this.error(`page frame of ${this.length} bytes`);
    } else {
      throw this.error(`unknown frame kind 0x${this.kind.toString(16)}`);
    }
    this.need = this.length;
    this.control = [];
    this.inPayload = true;
  }

  private endFrame(): Frame {
    this.inPayload = false;
    if (this.kind === KIND_PAGES) return { kind: 'pages', length: this.length };
    let json: unknown;
    try {
      json = JSON.parse(Buffer.concat(this.control).toString('utf8'));
    } catch {
      throw this.error('control frame is not JSON');
    }
    const parsed = ControlMessage.safeParse(json);
    if (!parsed.success) throw this.error(`bad control message: ${describeIssues(parsed.error)}`);
    return { kind: 'control', message: parsed.data };
  }

  private error(detail: string) {
    return HypervisorErrors.make('HypervisorProtocolError', { uri: this.peer, detail });
  }
}

/** What the destination acts on: hello, then each round once all its pages arrived, then final. */
export type StreamStep =
  | { readonly kind: 'hello'; readonly hello: HelloMessage }
  | { readonly kind: 'round'; readonly round: RoundMessage }
  | { readonly kind: 'final'; readonly final: FinalMessage };

/** Checks the order of frames: hello, rounds (numbered 1, 2, ...) each followed by its pages, final. */
export class StreamAssembler {
  /** Where in the stream we are; one line per stage. */
  private stage:
    /** Nothing received yet: only hello may come. */
    | 'expect-hello'
    /** Between rounds: a round or final may come. */
    | 'between'
    /** Inside a round: only its page frames may come. */
    | 'pages'
    /** Final received: nothing may follow. */
    | 'finished' = 'expect-hello';
  private lastIteration = 0;
  private pending: RoundMessage | undefined;
  private pagesLeft = 0;

  constructor(private readonly peer: string) {}

  get finished(): boolean {
    return this.stage === 'finished';
  }

  accept(frame: Frame): StreamStep | undefined {
    if (this.stage === 'finished') throw this.error('frame after final');
    if (frame.kind === 'pages') {
      if (this.stage !== 'pages') throw this.error(`page data outside a round (stage ${this.stage})`);
      this.pagesLeft -= frame.length;
      if (this.pagesLeft < 0) throw this.error(`round ${this.lastIteration} sent more page data than announced`);
      return this.pagesLeft === 0 ? this.closeRound() : undefined;
    }
    const m = frame.message;
    if (this.stage === 'pages') throw this.error(`${m.t} inside round ${this.lastIteration}'s page data`);
    if (this.stage === 'expect-hello') {
      if (m.t !== 'hello') throw this.error(`${m.t} before hello`);
      this.stage = 'between';
      return { kind: 'hello', hello: m };
    }
    switch (m.t) {
      case 'hello':
        throw this.error('second hello');
      case 'final':
        this.stage = 'finished';
        return { kind: 'final', final: m };
      case 'round':
        if (m.iteration !== this.lastIteration + 1) throw this.error(`round ${m.iteration} after round ${this.lastIteration}`);
        if (m.payloadBytes !== payloadBytesFor(m.bytes)) {
          throw this.error(`round ${m.iteration} announces ${m.payloadBytes} payload bytes for ${m.bytes} guest bytes`);
        }
        this.lastIteration = m.iteration;
        this.pending = m;
        this.pagesLeft = m.payloadBytes;
        this.stage = 'pages';
        return this.pagesLeft === 0 ? this.closeRound() : undefined;
    }
  }

  private closeRound(): StreamStep {
    const round = this.pending as RoundMessage;
    this.pending = undefined;
    this.stage = 'between';
    return { kind: 'round', round };
  }

  private error(detail: string) {
    return HypervisorErrors.make('HypervisorProtocolError', { uri: this.peer, detail });
  }
}
