/**
 * The end of a switch-over whose stream broke after the source paused the guest. If the final state
 * was sent, the source cannot tell whether the destination took it (the answer may be what was
 * lost), and resuming blindly could leave the guest running twice. Like libvirt's Confirm phase,
 * the source keeps the guest paused and asks the destination to settle the migration: 'completed'
 * (it runs there: the migration succeeded) or 'abandoned' (the destination dropped it and never
 * will run it: resuming here is safe). While the destination cannot be asked, it asks again.
 */
import type { Clock } from '../../../shared/clock.js';
import type { MigrationCredential } from '../driver.js';
import { sleepOn } from '../clockSleep.js';
import type { FinalSend, IncomingDone, MigrationChannel, MigrationDialer, OutgoingHello } from './migrationChannel.js';

/** How often a paused source asks again while the destination cannot be reached. */
export const SETTLE_RETRY_MS = 1000;

export interface SettleParams {
  readonly clock: Clock;
  readonly dialer: MigrationDialer;
  readonly destinationUri: string;
  readonly hello: OutgoingHello;
  readonly credential: MigrationCredential | undefined;
  /** The host shutting down: the paused guest dies with it, so stop asking. */
  readonly signal: AbortSignal;
}

/** Sends the final state; resolves when the domain runs on the destination, rejects (with the stream's error) when it never will. */
export async function finishSwitchover(p: SettleParams, channel: MigrationChannel, final: FinalSend): Promise<IncomingDone | undefined> {
  try {
    return await channel.finish(final);
  } catch (streamError) {
    const settle = p.dialer.settle?.bind(p.dialer);
    if (!settle) throw streamError;
    for (;;) {
      p.signal.throwIfAborted();
      const outcome = await settle(p.destinationUri, p.hello, p.credential).catch(() => undefined);
      if (outcome === 'completed') return undefined;
      if (outcome === 'abandoned') throw streamError;
      await sleepOn(p.clock, SETTLE_RETRY_MS, p.signal);
    }
  }
}
