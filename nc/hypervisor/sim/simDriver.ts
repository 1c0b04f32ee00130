/**
 * HypervisorDriver over the sim daemon's HTTP protocol, on its owner-only Unix socket (as a libvirt
 * NC talks to libvirtd's local socket). Every failure is translated here, at the adapter boundary:
 * no answer (refused, reset, timeout, no permission, a socket of a stranger) → HypervisorUnavailable;
 * a coded error body → that code; anything else the daemon says outside the protocol →
 * HypervisorProtocolError.
 */
import { lstat } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { systemClock, type Clock } from '../../../shared/clock.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import type {
  DomainInfo, DomainSpec, HostInfo, HypervisorDriver, HypervisorEvent, MigrationCredential, MigrationStats, MigrationTarget,
  VolumeAttachmentSpec,
} from '../driver.js';
import { HypervisorErrors } from '../errors.js';
import { sleepOn } from '../clockSleep.js';
import { EventHub } from '../eventHub.js';
import { trustedOwner } from './controlSocket.js';
import { fromErrorText, fromPayload } from './errorBody.js';
import {
  describeIssues, DomainInfoSchema, DomainListSchema, HostInfoSchema, HypervisorEventSchema, MigrationStatusSchema,
} from './protocol.js';
import type { z } from 'zod';

export interface SimDriverOptions {
  /** The daemon's control socket (its --socket), e.g. /run/ferry/simhv-127.0.1.1.sock. */
  readonly socketPath: string;
  /** Per-request timeout (not the migration's: that is collected by long polls). */
  readonly requestTimeoutMs?: number;
  /** How long each migration long poll waits on the daemon. */
  readonly migrationPollMs?: number;
  /** Delay before re-opening a dropped event stream. */
  readonly eventRetryMs?: number;
  readonly clock?: Clock;
}

export class SimDriver implements HypervisorDriver {
  private readonly socketPath: string;
  /** How errors name the daemon: unix:<path>. */
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly pollMs: number;
  private readonly retryMs: number;
  private readonly clock: Clock;
  private readonly closing = new AbortController();
  private readonly events = new EventHub<HypervisorEvent>();
  private eventLoop: Promise<void> | undefined;
  private eventsConnected: (() => void) | undefined;
  private connectedOnce: Promise<void>;

  constructor(opts: SimDriverOptions) {
    this.socketPath = opts.socketPath;
    this.base = `unix:${opts.socketPath}`;
    this.timeoutMs = opts.requestTimeoutMs ?? 5_000;
    this.pollMs = opts.migrationPollMs ?? 20_000;
    this.retryMs = opts.eventRetryMs ?? 1_000;
    this.clock = opts.clock ?? systemClock;
    this.connectedOnce = new Promise((resolve) => (this.eventsConnected = resolve));
  }

  async connect(): Promise<HostInfo> {
    return this.call('GET', '/v1/host', HostInfoSchema);
  }

  async list(): Promise<DomainInfo[]> {
    return (await this.call('GET', '/v1/domains', DomainListSchema)).domains;
  }

  async info(id: string): Promise<DomainInfo | undefined> {
    try {
      return await this.call('GET', `/v1/domains/${enc(id)}`, DomainInfoSchema);
    } catch (e) {
      if ((e as FerryError).code === 'DomainNotFound') return undefined;
      throw e;
    }
  }

  async create(spec: DomainSpec): Promise<DomainInfo> {
    return this.call('POST', '/v1/domains', DomainInfoSchema, spec);
  }

  async destroy(id: string): Promise<void> {
    await this.call('DELETE', `/v1/domains/${enc(id)}`);
  }

  async attachVolume(id: string, volume: VolumeAttachmentSpec): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/volumes`, DomainInfoSchema, volume);
  }

  async detachVolume(id: string, volumeId: string): Promise<DomainInfo> {
    return this.call('DELETE', `/v1/domains/${enc(id)}/volumes/${enc(volumeId)}`, DomainInfoSchema);
  }

  async pause(id: string): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/suspend`, DomainInfoSchema);
  }

  async resume(id: string): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/resume`, DomainInfoSchema);
  }

  async define(spec: DomainSpec): Promise<DomainInfo> {
    return this.call('POST', '/v1/definitions', DomainInfoSchema, spec);
  }

  async shutdown(id: string, opts: { readonly force: boolean }): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/shutdown`, DomainInfoSchema, { force: opts.force });
  }

  async reboot(id: string): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/reboot`, DomainInfoSchema);
  }

  async reset(id: string): Promise<DomainInfo> {
    return this.call('POST', `/v1/domains/${enc(id)}/reset`, DomainInfoSchema);
  }

  /** The credential crosses only this host-local control link, as libvirt's would its local socket. */
  async prepareIncoming(spec: DomainSpec, migrationId: string, credential?: MigrationCredential): Promise<void> {
    await this.call('POST', '/v1/incoming', DomainInfoSchema, { spec, migrationId, ...(credential ? { credential } : {}) });
  }

  async abortIncoming(id: string, migrationId: string): Promise<void> {
    await this.call('DELETE', `/v1/incoming/${enc(id)}/${enc(migrationId)}`);
  }

  /**
   * Starts (or joins, same migrationId) the migration, then long-polls its outcome. The daemon owns
   * the migration: if this process dies, it carries on and a new driver can collect the result.
   */
  async migrateOut(id: string, target: MigrationTarget): Promise<MigrationStats> {
    const { migrationId } = target;
    await this.call('POST', `/v1/domains/${enc(id)}/migrations`, undefined, target);
    const path = `/v1/domains/${enc(id)}/migrations/${enc(migrationId)}?waitMs=${this.pollMs}`;
    for (;;) {
      const status = await this.call('GET', path, MigrationStatusSchema, undefined, this.pollMs + this.timeoutMs);
      switch (status.state) {
        case 'running':
          continue;
        case 'completed':
          return status.stats;
        case 'failed':
          throw fromPayload(status.error, this.base);
        case 'unknown':
          throw HypervisorErrors.make('MigrationFailed', {
            migrationId, id, detail: 'the source hypervisor has no record of it (restarted?)',
          });
      }
    }
  }

  async abortMigration(id: string, migrationId: string): Promise<void> {
    await this.call('DELETE', `/v1/domains/${enc(id)}/migrations/${enc(migrationId)}`);
  }

  /** Events arrive over one SSE stream, opened with the first listener and re-opened if it drops. */
  onEvent(listener: (e: HypervisorEvent) => void): () => void {
    const off = this.events.on(listener);
    this.eventLoop ??= this.runEvents().finally(() => {
      this.eventLoop = undefined;
    });
    return off;
  }

  /** Resolves once the event stream has connected (events sent before that are not delivered). */
  eventsReady(): Promise<void> {
    return this.connectedOnce;
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.eventLoop;
  }

  private async runEvents(): Promise<void> {
    const signal = this.closing.signal;
    while (!signal.aborted && this.events.size > 0) {
      try {
        await this.checkSocket();
        const res = await this.open('GET', '/v1/events', { accept: 'text/event-stream' }, undefined, signal);
        if (res.statusCode !== 200) {
          res.resume();
          // Caught just below and retried: it never leaves this loop (events are hints).
          throw new Error(`HTTP ${res.statusCode}`);
        }
        this.eventsConnected?.();
        await this.readEvents(res);
      } catch {
        // Dropped or refused: retry below. Consumers re-read state with list(); events are hints.
      }
      if (signal.aborted || this.events.size === 0) break;
      await sleepOn(this.clock, this.retryMs, signal).catch(() => undefined);
    }
  }

  private async readEvents(res: IncomingMessage): Promise<void> {
    res.setEncoding('utf8');
    let buf = '';
    for await (const chunk of res as AsyncIterable<string>) {
      if (this.events.size === 0) break;
      buf += chunk;
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (!data) continue;
        try {
          const parsed = HypervisorEventSchema.safeParse(JSON.parse(data));
          if (parsed.success) this.events.emit(parsed.data);
        } catch {
          // A malformed event is dropped: state is re-read with list(), so nothing depends on it.
        }
      }
    }
    res.destroy();
  }

  /**
   * The socket must be one its owner (this user or root) made: in a directory someone else can write
   * to, a stranger's socket could stand in for the daemon and be handed migration credentials.
   */
  private async checkSocket(): Promise<void> {
    const s = await lstat(this.socketPath);
    const path = this.socketPath;
    if (!s.isSocket()) throw HypervisorErrors.make('HypervisorSocketUnusable', { path, detail: 'not a socket' });
    if (!trustedOwner(s.uid)) throw HypervisorErrors.make('HypervisorSocketUnusable', { path, detail: `it belongs to uid ${s.uid}, not to this user or root: not talking to it` });
  }

  /** One HTTP request on the socket; resolves with the response once its head arrived. */
  private open(method: string, path: string, headers: Record<string, string>, payload: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: this.socketPath, method, path, headers, signal }, resolve);
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** One request; every way it can fail becomes a HypervisorErrors code. */
  private async call<S extends z.ZodType>(
    method: string, path: string, schema?: S, body?: unknown, timeoutMs = this.timeoutMs,
  ): Promise<z.infer<S>> {
    // An own controller and timer, not AbortSignal.any([AbortSignal.timeout()]): Node holds the
    // sources of a combined signal weakly, and after a GC the timeout was seen never to fire.
    const abort = new AbortController();
    const timer = this.clock.setTimer(timeoutMs, () => abort.abort(new DOMException('timed out', 'TimeoutError')));
    const onClose = (): void => abort.abort(new DOMException('driver closed', 'AbortError'));
    if (this.closing.signal.aborted) onClose();
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    let status: number;
    let text: string;
    try {
      await this.checkSocket();
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
      const res = await this.open(method, path, headers, payload, abort.signal);
      status = res.statusCode ?? 0;
      text = await readText(res);
    } catch (e) {
      throw HypervisorErrors.make('HypervisorUnavailable', { uri: this.base, detail: describeFetchError(abort.signal.reason ?? e, timeoutMs) });
    } finally {
      timer.cancel();
      this.closing.signal.removeEventListener('abort', onClose);
    }
    if (status < 200 || status > 299) throw fromErrorText(text, status, this.base);
    if (!schema) return undefined as z.infer<S>;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw HypervisorErrors.make('HypervisorProtocolError', { uri: this.base, detail: `${method} ${path}: HTTP ${status} with a non-JSON body` });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw HypervisorErrors.make('HypervisorProtocolError', { uri: this.base, detail: `${method} ${path}: ${describeIssues(parsed.error)}` });
    }
    return parsed.data;
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

async function readText(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res as AsyncIterable<string>) text += chunk;
  return text;
}

function describeFetchError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; message?: string; code?: string };
  if (err?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (err?.name === 'AbortError') return 'driver closed';
  // EACCES: this process may not open the socket (it must run as the daemon's owner); ENOENT: no daemon.
  return err?.code ? `${err.code}: ${err.message ?? ''}` : err?.message ?? String(e);
}
