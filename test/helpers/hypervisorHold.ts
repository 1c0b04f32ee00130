/**
 * A hypervisor hold for real-process tests: an HTTP proxy between one NC and its simhv that forwards
 * every request (long polls and the event stream included) except the first one a test asks it to
 * hold. That one is never forwarded: the test learns the NC sent it — so the NC did everything it
 * does before that call, in order — and can kill the NC exactly there, with the hypervisor none the
 * wiser. Deterministic, no sleeps. Closed by close(); it starts no process.
 */
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

  /** `listen` is where the NC dials (its --sim-url); `target` is the simhv's base URL. */
  constructor(private readonly listen: { host: string; port: number }, private readonly target: URL) {}

  get url(): string {
    return `http://${this.listen.host}:${this.listen.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listen.port, this.listen.host, () => resolve());
    });
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
      host: this.target.hostname, port: Number(this.target.port), method, path, headers: req.headers, agent: false,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  }
}
