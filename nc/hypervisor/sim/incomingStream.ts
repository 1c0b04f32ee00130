/** Destination side of one accepted migration stream; the host decides, this object relays. */
import type { DomainSpec } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import { specDifference } from './hostLedger.js';
import type { FinalSend, IncomingDone, IncomingSession, OutgoingHello, RoundSend } from './migrationChannel.js';

/** What the stream asks of its host. */
export interface IncomingHost {
  readonly hostName: string;
  completeIncoming(stream: IncomingStream, final: FinalSend): Promise<IncomingDone>;
  failIncoming(stream: IncomingStream, reason: string): void;
}

export class IncomingStream implements IncomingSession {
  /** Guest memory bytes received so far. */
  received = 0;
  private ended = false;
  private readonly dropListeners: ((e: FerryError) => void)[] = [];

  constructor(
    private readonly host: IncomingHost,
    readonly spec: DomainSpec,
    readonly migrationId: string,
  ) {}

  get id(): string {
    return this.spec.id;
  }

  hello(hello: OutgoingHello): void {
    const diff = hello.migrationId !== this.migrationId
      ? `stream is for migration ${hello.migrationId}`
      : specDifference(this.spec, hello.spec);
    if (diff === undefined) return;
    this.fail(`hello mismatch: ${diff}`);
    throw HypervisorErrors.make('IncomingMismatch', { host: this.host.hostName, id: this.id, migrationId: this.migrationId, detail: diff });
  }

  round(round: RoundSend): void {
    this.received += round.bytes;
  }

  complete(final: FinalSend): Promise<IncomingDone> {
    this.ended = true;
    return this.host.completeIncoming(this, final);
  }

  fail(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.host.failIncoming(this, reason);
  }

  onDropped(listener: (error: FerryError) => void): void {
    this.dropListeners.push(listener);
  }

  /** The host dropped this stream (abortIncoming, destroy, shutdown); the transport breaks it. */
  dropped(error: FerryError): void {
    this.ended = true;
    for (const l of this.dropListeners) l(error);
  }
}
