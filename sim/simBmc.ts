/**
 * A simulated BMC per host behind Ferry's PowerDriver (clc/ha/power/powerDriver.ts): it powers the
 * simulated host off and on. Its faults come from the seed: `dead` never answers (the runtime's
 * deadline fails the fence), `slow` answers after seconds, `liesOff` says "off" while the host keeps
 * running, `liesFailed` powers the host off but reports a failure. A lie is recorded in `lies`: it is
 * outside what any fencing system can be held to (docs/SIMULATION.md, invariant 4).
 */
import type { PowerDriver, PowerOffResult, PowerState } from '../clc/ha/power/powerDriver.js';
import { PowerErrors } from '../clc/ha/power/errors.js';
import type { Clock } from '../shared/clock.js';
import { never } from './incarnation.js';
import type { Prng } from './prng.js';

export type BmcMode = 'ok' | 'dead' | 'slow' | 'liesOff' | 'liesFailed';

/** What a BMC can do to its host (SimCloud's power, with the ledger's bookkeeping). */
export interface Chassis {
  isOn(host: string): boolean;
  powerOff(host: string): void;
  powerOn(host: string): Promise<void>;
}

export class SimBmc implements PowerDriver {
  constructor(
    private readonly host: string,
    private readonly chassis: Chassis,
    private readonly clock: Clock,
    private readonly rng: Prng,
    private readonly mode: () => BmcMode,
    /** Called when this BMC lies (said off while the host runs; said failed though it powered off). */
    private readonly lied: (host: string, what: string) => void,
  ) {}

  private async answer(): Promise<BmcMode> {
    const mode = this.mode();
    if (mode === 'dead') return never<BmcMode>();
    const ms = mode === 'slow' ? this.rng.int(2000, 12_000) : this.rng.int(5, 300);
    await new Promise<void>((resolve) => this.clock.setTimer(ms, resolve));
    return mode;
  }

  private failed(action: string, detail: string): Error {
    return PowerErrors.make('FenceAgentFailed', { agent: 'sim-bmc', action, target: this.host, detail });
  }

  async status(): Promise<PowerState> {
    const mode = await this.answer();
    if (mode === 'liesOff') return 'off';
    return this.chassis.isOn(this.host) ? 'on' : 'off';
  }

  async on(): Promise<void> {
    await this.answer();
    await this.chassis.powerOn(this.host);
  }

  async off(): Promise<PowerOffResult> {
    const mode = await this.answer();
    const wasOn = this.chassis.isOn(this.host);
    if (mode === 'liesOff') {
      if (wasOn) this.lied(this.host, 'said off while the host runs');
      return { alreadyOff: !wasOn };
    }
    this.chassis.powerOff(this.host);
    if (mode === 'liesFailed') {
      this.lied(this.host, 'said the power-off failed though it powered off');
      throw this.failed('off', 'chassis did not respond');
    }
    return { alreadyOff: !wasOn };
  }

  async reboot(): Promise<void> {
    const mode = await this.answer();
    // A cycle it only claims: HA waits for health as after a real one (no safety at stake).
    if (mode === 'liesOff') return;
    this.chassis.powerOff(this.host);
    await new Promise<void>((resolve) => this.clock.setTimer(this.rng.int(500, 3000), resolve));
    await this.chassis.powerOn(this.host);
    if (mode === 'liesFailed') throw this.failed('reboot', 'chassis did not respond');
  }
}
