/**
 * The two narrow interfaces of a live migration between simulated hosts, and the in-process
 * transport. The source talks to a MigrationChannel obtained from a MigrationDialer; the
 * destination host hands out an IncomingSession per accepted stream. The daemon carries the
 * channel over HTTP (httpMigrationDialer.ts ↔ daemon.ts); a simulator connects them directly.
 */
import type { X509Certificate } from 'node:crypto';
import type { DomainSpec, MigrationCredential } from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';

export interface OutgoingHello {
  readonly migrationId: string;
  readonly spec: DomainSpec;
  readonly sourceHost: string;
}

export interface RoundSend {
  readonly iteration: number;
  /** Guest memory bytes in this round. */
  readonly bytes: number;
}

export interface FinalSend {
  readonly diskCounter: number;
  /** Suspended by its administrator when the migration began: the destination keeps it suspended. */
  readonly suspended?: boolean;
}

export interface IncomingDone {
  /** Guest memory bytes the destination received. */
  readonly receivedBytes: number;
}

/** Source side of one migration stream. */
export interface MigrationChannel {
  sendRound(round: RoundSend): Promise<void>;
  /** Sends the final state; resolves once the domain runs on the destination. */
  finish(final: FinalSend): Promise<IncomingDone>;
  /** Breaks the stream; the destination then drops the incoming domain. Idempotent. */
  abort(reason: string): void;
}

export interface MigrationDialer {
  /**
   * Opens a stream; resolves once the destination accepted it (it was prepared for this migration).
   * With a credential the stream is mutually authenticated TLS; an https:// destination needs one.
   */
  open(destinationUri: string, hello: OutgoingHello, credential?: MigrationCredential): Promise<MigrationChannel>;
  /**
   * After a switch-over broke with its outcome unknown: asks the destination to settle it (see
   * IncomingAcceptor.settleIncoming). Rejects when the destination cannot be asked. A dialer
   * without it cannot learn the outcome: the source then resumes, as before.
   */
  settle?(destinationUri: string, hello: OutgoingHello, credential?: MigrationCredential): Promise<SwitchoverOutcome>;
}

/** How a broken switch-over ended on the destination: it runs the domain, or it never will. */
export type SwitchoverOutcome = 'completed' | 'abandoned';

/** How an incoming stream reached the destination: plaintext, or TLS with what the source presented. */
export type StreamPeer =
  | { readonly kind: 'plaintext' }
  | { readonly kind: 'tls'; readonly cert: X509Certificate | undefined };

export const PLAINTEXT_PEER: StreamPeer = Object.freeze({ kind: 'plaintext' });

/** Destination side of one migration stream. */
export interface IncomingSession {
  readonly id: string;
  readonly migrationId: string;
  /** Checks the sender's spec against the prepared one; a mismatch drops the incoming domain. */
  hello(hello: OutgoingHello): void;
  round(round: RoundSend): void;
  /** The last round arrived: the domain runs here from now on. */
  complete(final: FinalSend): Promise<IncomingDone>;
  /** The stream broke: drop the incoming domain, leaving nothing. Idempotent. */
  fail(reason: string): void;
  /** Called if the host drops the session itself (abortIncoming, destroy, shutdown). */
  onDropped(listener: (error: FerryError) => void): void;
}

export interface IncomingAcceptor {
  /** Starts receiving for a prepared incoming domain; coded errors when not prepared, mismatched or the peer is refused. */
  acceptIncoming(id: string, migrationId: string, peer?: StreamPeer): Promise<IncomingSession>;
  /**
   * Ends an incoming migration whose source lost the stream during switch-over: 'completed' if the
   * domain runs here, else it drops whatever is left of it and answers 'abandoned' (atomic: an
   * abandoned migration can no longer complete). Idempotent.
   */
  settleIncoming?(id: string, migrationId: string): Promise<SwitchoverOutcome>;
  /**
   * The credential a TLS-prepared incoming domain serves as its certificate (the TLS server's pick by
   * server name); undefined when none is prepared for TLS. An in-process channel that checks
   * credentials (sim/migrationNet.ts) asks for it; the daemon's TLS listener reads it the same way.
   */
  incomingCredential?(id: string): MigrationCredential | undefined;
}

/** Hosts of one process that reach each other by URI, for the in-process simulator and unit tests. */
export class InProcessNetwork implements MigrationDialer {
  private readonly hosts = new Map<string, IncomingAcceptor>();

  register(uri: string, host: IncomingAcceptor): void {
    this.hosts.set(uri, host);
  }

  unregister(uri: string): void {
    this.hosts.delete(uri);
  }

  async open(destinationUri: string, hello: OutgoingHello): Promise<MigrationChannel> {
    const { migrationId, spec } = hello;
    const host = this.hosts.get(destinationUri);
    if (!host) {
      throw HypervisorErrors.make('MigrationFailed', { migrationId, id: spec.id, detail: `no host answers at ${destinationUri}` });
    }
    const session = await host.acceptIncoming(spec.id, migrationId);
    let broken: FerryError | undefined;
    session.onDropped((e) => {
      broken = e;
    });
    session.hello(hello);
    const check = (): void => {
      if (broken) throw HypervisorErrors.make('MigrationFailed', { migrationId, id: spec.id, detail: `destination dropped the stream: ${broken.message}` });
    };
    return {
      async sendRound(round) {
        check();
        session.round(round);
      },
      async finish(final) {
        check();
        return session.complete(final);
      },
      abort(reason) {
        if (!broken) session.fail(reason);
        broken ??= HypervisorErrors.make('MigrationAborted', { migrationId, id: spec.id });
      },
    };
  }
}

/**
 * Whether an error from the destination may reach the migrateOut caller as it is. MigrationAborted
 * is not among them: it means "you aborted it", which only the source's own abort may say; the
 * destination dropping the stream is a failed migration.
 */
export function isPassThroughMigrationError(e: unknown): e is FerryError {
  return isFerryError(e) && ['IncomingNotPrepared', 'IncomingMismatch', 'MigrationFailed', 'MigrationCredentialRejected', 'MigrationCredentialInvalid'].includes(e.code);
}
