/**
 * Destination side of the migration stream (see httpMigrationDialer.ts for the source side). The
 * host first checks the stream is for a prepared migration (a coded HTTP error if not); then the
 * answer is 200 with NDJSON lines while the body is decoded frame by frame into the IncomingSession.
 * A broken stream fails the session, which leaves nothing on this host.
 */
import type { Request, Response } from 'express';
import type { Logger } from '../../../shared/log.js';
import { isFerryError, type FerryError } from '../../../shared/errors/registry.js';
import { HypervisorErrors } from '../errors.js';
import { payloadOf } from './errorBody.js';
import type { IncomingSession, StreamPeer } from './migrationChannel.js';
import type { StreamReply } from './protocol.js';
import type { SimHost } from './simHost.js';
import { FrameDecoder, StreamAssembler, type StreamStep } from './streamFrames.js';

const line = (r: StreamReply): string => `${JSON.stringify(r)}\n`;

export async function receiveIncomingStream(
  host: SimHost, id: string, migrationId: string, req: Request, res: Response, log: Logger, streamPeer: StreamPeer,
): Promise<void> {
  const session: IncomingSession = await host.acceptIncoming(id, migrationId, streamPeer);
  if (req.socket.destroyed) {
    // The source hung up while we were accepting; no 'close' event will come for us any more.
    session.fail('stream closed before it was accepted');
    return;
  }
  const peer = `${req.socket.remoteAddress ?? 'unknown'}:${req.socket.remotePort ?? 0}`;
  const decoder = new FrameDecoder(peer);
  const assembler = new StreamAssembler(peer);
  /** Where this stream is; one line each. */
  let stage:
    /** Receiving frames. */
    | 'open'
    /** Final received; the host is starting the domain. */
    | 'completing'
    /** Answered (done or error); ignore the rest. */
    | 'over' = 'open';

  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.write(line({ t: 'accepted' }));

  const fail = (err: FerryError): void => {
    if (stage === 'over') return;
    stage = 'over';
    session.fail(err.message);
    res.end(line({ t: 'error', error: payloadOf(err) }));
    req.resume(); // discard whatever the source still sends until it hangs up
  };
  session.onDropped(fail);

  const onStep = (step: StreamStep): void => {
    if (step.kind === 'hello') session.hello(step.hello);
    else if (step.kind === 'round') session.round(step.round);
    else {
      stage = 'completing';
      session.complete(step.final).then(
        (done) => {
          stage = 'over';
          if (res.destroyed) {
            // The source cannot learn that we took over, so it resumes the guest: undo ours, or the
            // guest would run twice.
            log.warn({ id, migrationId }, 'stream closed before "done" could be sent; destroying the incoming copy');
            void host.destroy(id).catch((e: unknown) => log.error({ err: e, id }, 'undo incoming'));
            return;
          }
          res.end(line({ t: 'done', receivedBytes: done.receivedBytes }));
        },
        (e: unknown) => {
          stage = 'open';
          fail(asCoded(e));
        },
      );
    }
  };

  req.on('data', (chunk: Buffer) => {
    if (stage !== 'open') return;
    try {
      for (const frame of decoder.push(chunk)) {
        const step = assembler.accept(frame);
        if (step) onStep(step);
      }
    } catch (e) {
      fail(asCoded(e));
    }
  });
  req.on('end', () => {
    if (stage !== 'open') return;
    try {
      decoder.end();
      throw HypervisorErrors.make('HypervisorProtocolError', { uri: peer, detail: 'stream ended before final' });
    } catch (e) {
      fail(asCoded(e));
    }
  });
  res.on('close', () => {
    if (stage === 'open') {
      stage = 'over';
      session.fail('stream broken');
    }
  });
}

function asCoded(e: unknown): FerryError {
  return isFerryError(e) ? e : HypervisorErrors.make('HypervisorInternalError', { detail: (e as Error)?.message ?? String(e) });
}
