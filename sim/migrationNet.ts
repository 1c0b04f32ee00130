/**
 * The NC↔NC migration channel between simulated hosts (hypervisor to hypervisor): a MigrationDialer
 * like InProcessNetwork, plus the faults a real stream suffers. A partition between two hosts, or
 * the death of either end, breaks their open streams at once: the destination drops the incoming
 * domain and the source's next send fails, so the source resumes the VM. A switch-over fault breaks
 * the final hand-over itself (source paused): the final state is lost on the way, or it arrives and
 * the destination's answer is lost, so the source cannot know which (see docs/SIMULATION.md). With
 * per-migration credentials it decides what the TLS handshake decides (handshake()).
 */
import { X509Certificate } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { FerryError } from '../shared/errors/registry.js';
import type { MigrationCredential } from '../nc/hypervisor/driver.js';
import { HypervisorErrors } from '../nc/hypervisor/errors.js';
import {
  PLAINTEXT_PEER, type IncomingAcceptor, type IncomingSession, type MigrationChannel, type MigrationDialer, type OutgoingHello, type StreamPeer,
  type SwitchoverOutcome,
} from '../nc/hypervisor/sim/migrationChannel.js';
import { refusedDestination, sourceGuardFor } from '../nc/hypervisor/sim/migrationTls.js';

/** Where a switch-over breaks: before the destination took the final state, or after (the answer is lost). */
export type SwitchoverCut = 'final-lost' | 'reply-lost';

interface Stream {
  readonly source: string;
  readonly destination: string;
  readonly session: IncomingSession;
  broken: FerryError | undefined;
  /** Sends waiting for a hung link to heal; failed when the stream breaks. */
  readonly waiting: Set<{ resolve: () => void; reject: (e: FerryError) => void }>;
}

/** The host name in a migration URI such as http://127.0.0.1:16509. */
export function hostOfUri(uri: string): string {
  return uri.replace(/^[a-z]+:\/\//, '').replace(/[:/].*$/, '');
}

export class MigrationNet {
  private readonly hosts = new Map<string, IncomingAcceptor>();
  private readonly cut = new Set<string>();
  /** Links where streams stall (no progress, no error) until healed: what the stall timeout is for. */
  private readonly hung = new Set<string>();
  private readonly streams = new Set<Stream>();
  /** Hosts whose next switch-over (as source or destination) breaks, and where. */
  private readonly switchoverCuts = new Map<string, SwitchoverCut>();

  constructor(private readonly trace: (line: string) => void) {}

  attach(host: string, acceptor: IncomingAcceptor): void {
    this.hosts.set(host, acceptor);
  }

  /** The host died: it accepts nothing, and every stream to or from it breaks. */
  detach(host: string): void {
    this.hosts.delete(host);
    this.breakWhere((s) => s.source === host || s.destination === host, `host ${host} is down`);
  }

  partition(a: string, b: string): void {
    this.cut.add(key(a, b));
    this.breakWhere((s) => key(s.source, s.destination) === key(a, b), `migration link ${a}-${b} partitioned`);
  }

  hang(a: string, b: string): void {
    this.hung.add(key(a, b));
  }

  /** Arms a one-shot fault: the next switch-over to or from `host` breaks at `at`. */
  breakSwitchover(host: string, at: SwitchoverCut): void {
    this.switchoverCuts.set(host, at);
  }

  heal(): void {
    this.cut.clear();
    this.hung.clear();
    this.switchoverCuts.clear();
    for (const s of this.streams) for (const w of [...s.waiting]) w.resolve();
  }

  /** The dialer a host's outgoing migrations use; `clock`: the source host's, for its check of the destination's credential. */
  dialer(source: string, clock?: Clock): MigrationDialer {
    return {
      open: (uri, hello, credential) => this.open(source, uri, hello, credential, clock),
      settle: (uri, hello) => this.settle(source, hostOfUri(uri), hello),
    };
  }

  /**
   * What the TLS handshake of the daemons decides, in process (nc/hypervisor/sim/migrationTls.ts):
   * an https:// destination needs the source's credential; the destination serves the one it was
   * prepared with, or none (no handshake); the source accepts only the other side of its own item,
   * hosts and generation. The destination's check of the source comes after, in acceptIncoming.
   */
  private handshake(uri: string, acceptor: IncomingAcceptor, hello: OutgoingHello, credential: MigrationCredential | undefined, clock: Clock | undefined): StreamPeer {
    const guard = sourceGuardFor(uri, credential, hello);
    if (!guard || !credential) return PLAINTEXT_PEER;
    const { migrationId, spec } = hello;
    const served = acceptor.incomingCredential?.(spec.id);
    if (!served) {
      throw HypervisorErrors.make('MigrationCredentialRejected', {
        migrationId, id: spec.id, reason: 'handshake', detail: 'the destination has no TLS migration prepared for this domain',
      });
    }
    const refusal = refusedDestination(guard, new X509Certificate(served.certPem), hello, clock?.now() ?? 0);
    if (refusal) throw refusal;
    return { kind: 'tls', cert: new X509Certificate(credential.certPem) };
  }

  /** The source asks the destination how a broken switch-over ended: over the same links, so a cut link refuses. */
  private async settle(source: string, destination: string, hello: OutgoingHello): Promise<SwitchoverOutcome> {
    const acceptor = this.hosts.get(destination);
    const k = key(source, destination);
    if (!acceptor?.settleIncoming || this.cut.has(k) || this.hung.has(k)) {
      throw HypervisorErrors.make('MigrationFailed', { migrationId: hello.migrationId, id: hello.spec.id, detail: `no route to ${destination}` });
    }
    const outcome = await acceptor.settleIncoming(hello.spec.id, hello.migrationId);
    this.trace(`mig ${source}->${destination} ${hello.spec.id} switch-over settled: ${outcome}`);
    return outcome;
  }

  /** The armed switch-over fault of either end, consumed. */
  private takeSwitchoverCut(stream: Stream): SwitchoverCut | undefined {
    for (const h of [stream.source, stream.destination]) {
      const at = this.switchoverCuts.get(h);
      if (at === undefined) continue;
      this.switchoverCuts.delete(h);
      this.trace(`mig stream ${stream.source}->${stream.destination} ${stream.session.id} switch-over broken: ${at}`);
      return at;
    }
    return undefined;
  }

  private breakWhere(pred: (s: Stream) => boolean, reason: string): void {
    for (const s of [...this.streams]) {
      if (!pred(s) || s.broken) continue;
      this.trace(`mig stream ${s.source}->${s.destination} ${s.session.id} broken: ${reason}`);
      s.broken = HypervisorErrors.make('MigrationFailed', { migrationId: s.session.migrationId, id: s.session.id, detail: reason });
      this.streams.delete(s);
      for (const w of [...s.waiting]) w.reject(s.broken);
      s.session.fail(reason);
    }
  }

  /** Resolves at once unless the link is hung: then when it heals, or fails when the stream breaks. */
  private passage(stream: Stream): Promise<void> {
    if (stream.broken) return Promise.reject(stream.broken);
    if (!this.hung.has(key(stream.source, stream.destination))) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w = {
        resolve: () => { stream.waiting.delete(w); resolve(); },
        reject: (e: FerryError) => { stream.waiting.delete(w); reject(e); },
      };
      stream.waiting.add(w);
    });
  }

  private async open(source: string, uri: string, hello: OutgoingHello, credential: MigrationCredential | undefined, clock: Clock | undefined): Promise<MigrationChannel> {
    const { migrationId, spec } = hello;
    const destination = hostOfUri(uri);
    const acceptor = this.hosts.get(destination);
    if (!acceptor || this.cut.has(key(source, destination))) {
      throw HypervisorErrors.make('MigrationFailed', { migrationId, id: spec.id, detail: `no route to ${destination}` });
    }
    const peer = this.handshake(uri, acceptor, hello, credential, clock);
    const session = await acceptor.acceptIncoming(spec.id, migrationId, peer);
    const stream: Stream = { source, destination, session, broken: undefined, waiting: new Set() };
    this.streams.add(stream);
    session.onDropped((e) => {
      stream.broken ??= HypervisorErrors.make('MigrationFailed', { migrationId, id: spec.id, detail: `destination dropped the stream: ${e.message}` });
      this.streams.delete(stream);
    });
    session.hello(hello);
    const check = (): void => {
      if (stream.broken) throw stream.broken;
    };
    return {
      sendRound: async (round) => {
        await this.passage(stream);
        check();
        session.round(round);
      },
      finish: async (final) => {
        await this.passage(stream);
        check();
        const cut = this.takeSwitchoverCut(stream);
        if (cut === 'final-lost') this.breakWhere((s) => s === stream, 'the final state was lost on the way');
        check();
        try {
          const done = await session.complete(final);
          if (cut === 'reply-lost') {
            throw HypervisorErrors.make('MigrationFailed', { migrationId, id: spec.id, detail: 'destination closed the stream before answering' });
          }
          return done;
        } finally {
          this.streams.delete(stream);
        }
      },
      abort: (reason) => {
        this.streams.delete(stream);
        if (!stream.broken) session.fail(reason);
        stream.broken ??= HypervisorErrors.make('MigrationAborted', { migrationId, id: spec.id });
        for (const w of [...stream.waiting]) w.reject(stream.broken);
      },
    };
  }
}

function key(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
