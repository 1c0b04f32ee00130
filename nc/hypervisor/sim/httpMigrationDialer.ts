/**
 * Source side of the daemon ↔ daemon migration stream over HTTP/1.1: one POST whose chunked body
 * carries hello, the rounds with their page bytes, and final (streamFrames.ts); the destination
 * answers at once with 200 and NDJSON lines: `accepted`, then `done` or `error`. Breaking the
 * request is how either side aborts, as closing QEMU's migration socket is.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as tlsRequest } from 'node:https';
import type { MigrationCredential } from '../driver.js';
import { migrationTlsClient, type MigrationTlsClient } from './migrationTls.js';
import type { Clock } from '../../../shared/clock.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import { HypervisorErrors } from '../errors.js';
import { fromErrorText, fromPayload } from './errorBody.js';
import type { IncomingDone, MigrationChannel, MigrationDialer, OutgoingHello } from './migrationChannel.js';
import { StreamReply } from './protocol.js';
import { encodeControl, encodePages, payloadBytesFor } from './streamFrames.js';

export interface HttpDialerOptions {
  readonly clock: Clock;
  /** How long the destination may take to accept the stream. */
  readonly acceptTimeoutMs?: number;
}

const PAGE_CHUNK = 64 * 1024;

export function httpMigrationDialer(opts: HttpDialerOptions): MigrationDialer {
  const fullChunk = encodePages(PAGE_CHUNK); // reused: page content does not matter, only its size
  return {
    open: (uri, hello, credential) => openStream(uri, hello, credential, opts.clock, opts.acceptTimeoutMs ?? 10_000, fullChunk),
  };
}

function openStream(
  uri: string, hello: OutgoingHello, credential: MigrationCredential | undefined, clock: Clock, acceptTimeoutMs: number, fullChunk: Buffer,
): Promise<MigrationChannel> {
  const { migrationId, spec } = hello;
  const id = spec.id;
  const failed = (detail: string) => HypervisorErrors.make('MigrationFailed', { migrationId, id, detail });
  const url = new URL(`/v1/incoming/${encodeURIComponent(id)}/${encodeURIComponent(migrationId)}/stream`, uri);

  return new Promise<MigrationChannel>((resolveOpen, rejectOpen) => {
    let broken: FerryError | undefined;
    let accepted = false;
    let resolveDone!: (d: IncomingDone) => void;
    let rejectDone!: (e: FerryError) => void;
    const done = new Promise<IncomingDone>((res, rej) => {
      resolveDone = res;
      rejectDone = rej;
    });
    done.catch(() => undefined); // observed by finish(); an early break must not be an unhandled rejection

    const options = { method: 'POST', headers: { 'content-type': 'application/octet-stream' } };
    let tls: MigrationTlsClient | undefined;
    try {
      tls = migrationTlsClient(url, credential, hello, clock);
    } catch (e) {
      rejectOpen(e);
      return;
    }
    const req: ClientRequest = tls ? tlsRequest(url, { ...options, ...tls.options }) : request(url, options);
    tls?.watch(req);
    const timer = clock.setTimer(acceptTimeoutMs, () => breakWith(failed(`destination did not accept within ${acceptTimeoutMs} ms`)));

    function breakWith(err: FerryError): void {
      if (broken) return;
      broken = err;
      timer.cancel();
      req.destroy();
      if (!accepted) rejectOpen(err);
      rejectDone(err);
    }

    req.on('error', (e: NodeJS.ErrnoException) => breakWith(tls?.failure(e) ?? failed(`stream to ${uri}: ${e.code ?? e.message}`)));
    req.on('response', (res: IncomingMessage) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (c: string) => {
          if (text.length < 65536) text += c; // an error body is small; ignore anything past that
        });
        res.on('end', () => breakWith(fromErrorText(text, res.statusCode ?? 0, uri)));
        res.on('error', () => breakWith(failed('destination reset the stream')));
        return;
      }
      let buf = '';
      let finished = false;
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const reply = parseReply(line, uri);
          if ('code' in reply) return breakWith(reply);
          if (reply.t === 'accepted') {
            accepted = true;
            timer.cancel();
            resolveOpen(channel);
          } else if (reply.t === 'done') {
            finished = true;
            resolveDone({ receivedBytes: reply.receivedBytes });
          } else {
            breakWith(fromPayload(reply.error, uri));
          }
        }
      });
      res.on('close', () => {
        if (!finished) breakWith(failed('destination closed the stream'));
      });
    });

    /** Writes with backpressure; rejects once the stream is broken. */
    function write(buf: Buffer): Promise<void> {
      if (broken) return Promise.reject(broken);
      if (req.write(buf)) return Promise.resolve();
      return new Promise<void>((res, rej) => {
        const onDrain = (): void => {
          req.off('close', onClose);
          res();
        };
        const onClose = (): void => {
          req.off('drain', onDrain);
          rej(broken ?? failed('stream closed'));
        };
        req.once('drain', onDrain);
        req.once('close', onClose);
      });
    }

    const channel: MigrationChannel = {
      async sendRound(round) {
        const payloadBytes = payloadBytesFor(round.bytes);
        await write(encodeControl({ t: 'round', iteration: round.iteration, bytes: round.bytes, payloadBytes }));
        for (let left = payloadBytes; left > 0; left -= PAGE_CHUNK) {
          await write(left >= PAGE_CHUNK ? fullChunk : encodePages(left));
        }
      },
      async finish(final) {
        await write(encodeControl({ t: 'final', diskCounter: final.diskCounter, ...(final.suspended === true ? { suspended: true } : {}) }));
        req.end();
        return done;
      },
      abort(reason) {
        breakWith(HypervisorErrors.make('MigrationAborted', { migrationId, id, detail: reason }));
      },
    };

    req.write(encodeControl({ t: 'hello', migrationId, spec, sourceHost: hello.sourceHost }));
  });
}

function parseReply(line: string, uri: string): StreamReply | FerryError {
  try {
    const parsed = StreamReply.safeParse(JSON.parse(line));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through: not JSON
  }
  return HypervisorErrors.make('HypervisorProtocolError', { uri, detail: `bad stream reply line: ${line.slice(0, 120)}` });
}
