/** libvirt lifecycle events → what the driver tells the NC (pure). */
import type { HypervisorEvent } from '../driver.js';
import { VIR } from './ffi.js';

export type LifecycleMeaning =
  | { readonly kind: 'event'; readonly event: HypervisorEvent }
  /** The incoming domain of a live migration may have arrived (it resumed, or it stays suspended): look now. */
  | { readonly kind: 'arrived'; readonly id: string }
  | { readonly kind: 'ignore' };

export function lifecycleMeaning(id: string, event: number, detail: number): LifecycleMeaning {
  const E = VIR.EVENT;
  const S = VIR.EVENT_STOPPED;
  switch (event) {
    case E.STARTED:
      // An incoming migration's domain starts paused; it counts once it resumes.
      return detail === VIR.EVENT_STARTED.MIGRATED ? { kind: 'ignore' } : { kind: 'event', event: { kind: 'started', id } };
    case E.RESUMED:
      return detail === VIR.EVENT_RESUMED.MIGRATED ? { kind: 'arrived', id } : { kind: 'ignore' };
    case E.SUSPENDED:
      // A paused guest's migration ends with a suspend on the destination, not a resume. A hint only:
      // the driver re-reads the state, and only for a domain it expects (an ordinary pause changes nothing).
      return { kind: 'arrived', id };
    case E.CRASHED:
      return { kind: 'event', event: { kind: 'stopped', id, reason: 'crashed' } };
    case E.STOPPED: {
      const reason = detail === S.MIGRATED ? 'migrated' : detail === S.CRASHED || detail === S.FAILED ? 'crashed' : 'destroyed';
      return { kind: 'event', event: { kind: 'stopped', id, reason } };
    }
    default:
      return { kind: 'ignore' };
  }
}
