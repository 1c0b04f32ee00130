/**
 * A hypervisor hold for real-process tests: an HTTP proxy on a Unix socket, between one NC and its
 * simhv's control socket (docs/simulated-hypervisor.md), that forwards
 * every request (long polls and the event stream included) except the first one a test asks it to
 * hold. That one is never forwarded: the test learns the NC sent it — so the NC did everything it
 * does before that call, in order — and can kill the NC exactly there, with the hypervisor none the
 * wiser. Deterministic, no sleeps. Closed by close(); it starts no process.
 */
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HeldRequest {
  readonly method: string;
  readonly path: string;
}

type Matcher = (method: string, path: string) => boolean;

export class HypervisorHold {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly held: ServerResponse[] = [];
  private wanted: { readonly match: Matcher; readonly resolve: (r: HeldRequest) => void } | undefined;
  /** Requests forwarded so far (method and path), for a failing test's message. */
  readonly forwarded: string[] = [];

  private target: string | undefined;

  /** `socket` is where the NC dials (its --sim-socket); start() names the simhv's own socket. */
  constructor(readonly socket: string) {}

  async start(target: string): Promise<void> {
    this.target = target;
    rmSync(this.socket, { force: true });
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socket, () => resolve());
    });
    // As simhv's own socket: only its owner may drive the hypervisor through it.
    chmodSync(this.socket, 0o600);
    this.server = server;
  }

  /** Holds the next request that matches (never forwarded); resolves when it has arrived. */
  holdNext(match: Matcher): Promise<HeldRequest> {
    if (this.wanted) throw new Error('already holding for another request');
    return new Promise((resolve) => {
      this.wanted = { match, resolve };
    });
  }

  /** Drops what is held: its connection closes, as it would when the caller's process dies. */
  dropHeld(): void {
    for (const res of this.held.splice(0)) res.destroy();
  }

  async close(): Promise<void> {
    this.wanted = undefined;
    this.dropHeld();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
    rmSync(this.socket, { force: true });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const wanted = this.wanted;
    if (wanted?.match(method, path)) {
      this.wanted = undefined;
      this.held.push(res);
      req.resume(); // read the body; it goes nowhere
      wanted.resolve({ method, path });
      return;
    }
    this.forwarded.push(`${method} ${path}`);
    const up = request({
      socketPath: this.target, method, path, headers: req.headers, agent: false,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  }
}
