/**
 * The narrow interfaces the HA runner acts through (STYLE habit 4). `HaProvider` is the issue's
 * provider (isEligible, isHealthy, hasActivity, recover, fence; a KVM-style one asks the CC, a
 * neighbour NC and the fence agent); `HaServiceActions` are the CLC paths HA reuses (DisableService,
 * MigrateInstances, the restart elsewhere). Every call gets the deadline of its effect and must settle
 * by then: the pools bound how many run, not how long.
 */
import type { ActivityOutcome } from './hostHaState.js';

export interface HaHostRef {
  readonly host: string;
  readonly partition: string;
}

export interface HaProvider {
  isEligible(ref: HaHostRef): Promise<{ readonly eligible: boolean; readonly reason: string }>;
  isHealthy(ref: HaHostRef, deadline: number): Promise<{ readonly healthy: boolean; readonly detail: string }>;
  /** Writes by the host's VMs or its heartbeat since `since`, seen by a neighbour on shared storage. */
  hasActivity(ref: HaHostRef, since: number, deadline: number): Promise<{ readonly outcome: ActivityOutcome; readonly detail: string }>;
  /** Power cycle. */
  recover(ref: HaHostRef, deadline: number): Promise<void>;
  /** Power off; resolves only once the power is confirmed off ("already off" included). */
  fence(ref: HaHostRef, deadline: number): Promise<{ readonly alreadyOff: boolean }>;
  /** The BMC's power status (the power watch); `unknown` without a configured BMC. A rejection counts as unknown. */
  powerStatus(ref: HaHostRef, deadline: number): Promise<{ readonly power: 'on' | 'off' | 'unknown'; readonly detail: string }>;
}

/** One attempt at an owed repair: done, or what is left (the attempt is retried with back-off). */
export interface RepairOutcome {
  readonly done: boolean;
  readonly detail: string;
}

export interface HaServiceActions {
  /** Maintenance through DisableService (gating included). */
  disableHost(ref: HaHostRef, reason: string): Promise<void>;
  /** One drain attempt: DisableService unless disabled, then MigrateInstances; done once disabled and empty. */
  drain(ref: HaHostRef): Promise<RepairOutcome>;
  /** One attempt at restarting the fenced host's instances elsewhere; done once none is left to restart. */
  evacuate(ref: HaHostRef, fencedBy: 'agent' | 'operator'): Promise<RepairOutcome>;
  /**
   * One attempt at powering on, on a fenced host returned to service, its own instances (not restarted
   * elsewhere, not terminated) that are shut off; done once none is left to power on.
   */
  powerOn(ref: HaHostRef): Promise<RepairOutcome>;
}
