/**
 * RebootInstances' hard-reboot fallback (issue 18 part 5), as EC2 does it: the guest is asked to
 * reboot (ACPI, HypervisorDriver.reboot); a guest that ignores it (no ACPI daemon, hung) is reset
 * (virDomainReset) once `rebootTimeoutMs` has passed on the injected clock without the hypervisor
 * reporting a reboot. Pure: the watch, what was observed since, and `now` in; one step out.
 * NodeController runs it: it arms a timer at the deadline and feeds it the `rebooted` events.
 *
 * | the guest rebooted | instance still running here | deadline passed | step     |
 * |--------------------|-----------------------------|-----------------|----------|
 * | yes                | any                         | any             | rebooted |
 * | no                 | no (stopped, gone, moving)  | any             | moot     |
 * | no                 | yes                         | no              | wait     |
 * | no                 | yes                         | yes             | reset    |
 */
export interface RebootWatch {
  readonly instanceId: string;
  /** When the guest was asked (epoch ms, the NC's clock). */
  readonly askedAt: number;
  /** When it is reset unless it rebooted by then. */
  readonly deadline: number;
}

export interface RebootObservation {
  /** The hypervisor reported a reboot of the domain since it was asked. */
  readonly rebooted: boolean;
  /** The instance still runs here, as it did when asked: its record running, not stopped by its user, not migrating, its domain running. */
  readonly stillRunning: boolean;
}

export type RebootFallbackStep =
  /** The guest did it: nothing more. */
  | 'rebooted'
  /** Stopped, terminated or migrating meanwhile: a reset would be wrong; nothing more. */
  | 'moot'
  /** Look again at the deadline. */
  | 'wait'
  /** The guest ignored the request: reset it now. */
  | 'reset';

export function rebootFallbackStep(w: RebootWatch, o: RebootObservation, now: number): RebootFallbackStep {
  if (o.rebooted) return 'rebooted';
  if (!o.stillRunning) return 'moot';
  return now < w.deadline ? 'wait' : 'reset';
}
