/**
 * The narrow power-management interface host HA needs (STYLE habit 4): one real adapter runs the
 * ClusterLabs fence agents (fenceAgentDriver.ts); unit tests use hand-written fakes.
 */
export type PowerState = 'on' | 'off';

export interface PowerOffResult {
  /** The agent found the host already off: fenced all the same. */
  readonly alreadyOff: boolean;
}

export interface PowerDriver {
  /** Resolves with the chassis power state; rejects with a coded PowerErrors error. */
  status(): Promise<PowerState>;
  on(): Promise<void>;
  /** The fence: resolves only once the agent confirmed the power is off. */
  off(): Promise<PowerOffResult>;
  /** Power cycle (the HA recovery). */
  reboot(): Promise<void>;
}
