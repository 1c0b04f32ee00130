/**
 * The "machine" behind a lab BMC, as in the ipmi_sim lab's chassis_control: power on starts the host
 * command in a new session (setsid, so its pid is its process group id), power off kills that whole
 * group, and the power is On while any live process of the group remains. Without a command the
 * power is a flag. Changes run one at a time (a reset arriving during a power-off waits for it).
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PowerEffect, RedfishPower } from './redfishModel.js';
import { groupAlive } from './processGroup.js';

/** A killed group is gone within milliseconds; this bounds the wait on a wedged kernel. */
const GROUP_EXIT_WAIT_MS = 2000;
const POLL_MS = 10;

export class LabHost {
  private pgid: number | null = null;
  private flag: RedfishPower = 'Off';
  private queue: Promise<unknown> = Promise.resolve();

  /** `command` empty: no process, the power is only a flag. */
  constructor(private readonly command: readonly string[]) {}

  /** The current host process group, if any was started. */
  get hostPgid(): number | null {
    return this.pgid;
  }

  async power(): Promise<RedfishPower> {
    if (this.command.length === 0) return this.flag;
    return this.pgid !== null && await groupAlive(this.pgid) ? 'On' : 'Off';
  }

  /** Applies a reset's effect after any earlier one has finished. */
  apply(effect: PowerEffect): Promise<void> {
    const run = async (): Promise<void> => {
      if (effect === 'off' || effect === 'restart') await this.off();
      if (effect === 'on' || effect === 'restart') await this.on();
    };
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async on(): Promise<void> {
    this.flag = 'On';
    const [cmd, ...args] = this.command;
    if (cmd === undefined || await this.power() === 'On') return;
    // detached: setsid(), so the host outlives nothing it should not and its group is killable as one.
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    this.pgid = child.pid ?? null;
  }

  private async off(): Promise<void> {
    this.flag = 'Off';
    const pgid = this.pgid;
    if (pgid === null) return;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    for (let waited = 0; waited < GROUP_EXIT_WAIT_MS && await groupAlive(pgid); waited += POLL_MS) await sleep(POLL_MS);
  }
}
