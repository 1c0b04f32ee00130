/**
 * The lab Redfish BMC's HTTPS edge: reads a request (bounded), asks the pure model
 * (redfishModel.ts) for the reply, applies its power effect to the lab host before answering (so a
 * 204 to ForceOff means the host is dead), and implements the socket-level faults: `hang` keeps each
 * request open unanswered, `closed` stops listening so connections are refused.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LabHost } from './labHost.js';
import { handleRedfish, MAX_BODY, type BmcFault, type RedfishReply } from './redfishModel.js';
import type { LabTlsIdentity } from './redfishTls.js';

export interface RedfishBmcOptions {
  /** A loopback address (checked by main.ts). */
  readonly address: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly host: LabHost;
  readonly tls: LabTlsIdentity;
  readonly fault?: BmcFault;
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size <= MAX_BODY) chunks.push(b);
    });
    req.on('end', () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

function send(res: ServerResponse, reply: RedfishReply): void {
  const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'OData-Version': '4.0', ...reply.headers,
    ...(body ? { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)) } : {}),
  });
  res.end(body);
}

export class RedfishBmc {
  private readonly server: Server;
  private faultMode: BmcFault;
  private listening = false;
  /** Requests held by the hang fault, answered by nothing; destroyed when the fault ends. */
  private readonly held = new Set<ServerResponse>();

  constructor(private readonly opts: RedfishBmcOptions) {
    this.faultMode = opts.fault ?? 'none';
    this.server = createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, (req, res) => void this.serve(req, res));
  }

  get fault(): BmcFault {
    return this.faultMode;
  }

  get url(): string {
    return `https://${this.opts.address}:${this.opts.port}`;
  }

  /** Starts listening unless the fault is `closed`. */
  async start(): Promise<void> {
    if (this.faultMode !== 'closed') await this.listen();
  }

  async setFault(fault: BmcFault): Promise<void> {
    this.faultMode = fault;
    if (fault !== 'hang') this.releaseHeld();
    if (fault === 'closed') await this.unlisten();
    else await this.listen();
  }

  async stop(): Promise<void> {
    this.releaseHeld();
    await this.unlisten();
  }

  private listen(): Promise<void> {
    if (this.listening) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.address, () => {
        this.server.off('error', reject);
        this.listening = true;
        resolve();
      });
    });
  }

  private unlisten(): Promise<void> {
    if (!this.listening) return Promise.resolve();
    this.listening = false;
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      // Keep-alive connections would otherwise still reach a "closed" BMC.
      this.server.closeAllConnections();
    });
  }

  private releaseHeld(): void {
    for (const res of this.held) res.destroy();
    this.held.clear();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (this.faultMode === 'hang') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    if (body === null) {
      send(res, { status: 413, headers: {}, body: { error: { code: 'Base.1.8.GeneralError', message: `request body over ${MAX_BODY} bytes` } } });
      return;
    }
    const { host } = this.opts;
    try {
      const reply = handleRedfish({
        method: req.method ?? 'GET', url: req.url ?? '/', authorization: req.headers.authorization, contentType: req.headers['content-type'], body,
      }, { power: await host.power(), fault: this.faultMode, user: this.opts.user, password: this.opts.password });
      if (reply.effect !== undefined) await host.apply(reply.effect);
      send(res, reply);
    } catch (e) {
      // /proc unreadable or the like: the BMC says so instead of leaving the agent waiting.
      send(res, { status: 500, headers: {}, body: { error: { code: 'Base.1.8.InternalError', message: e instanceof Error ? e.message : String(e) } } });
    }
  }
}
