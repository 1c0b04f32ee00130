/**
 * The real PowerDriver: runs a ClusterLabs fence agent per action with the stdin `key=value`
 * protocol (fenceAgentProtocol.ts). The agent runs in its own process group so a timeout kills it
 * and whatever it started (ipmitool); its output is redacted before it reaches an error.
 */
import { spawn } from 'node:child_process';
import { systemClock, type Clock } from '../../../shared/clock.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import { PowerErrors } from './errors.js';
import { agentEnv, agentStdin, interpretExit, redact, type AgentAction, type AgentOutcome, type FenceAgentConfig } from './fenceAgentProtocol.js';
import type { PowerDriver, PowerOffResult, PowerState } from './powerDriver.js';

/** Agents print a few lines; more is a runaway, and is cut. */
const MAX_OUTPUT = 64 * 1024;

export interface FenceAgentDriverOptions {
  readonly clock?: Clock;
  /** PATH and the rest; PYTHONWARNINGS is always added. */
  readonly env?: NodeJS.ProcessEnv;
}

export class FenceAgentDriver implements PowerDriver {
  private readonly clock: Clock;
  private readonly baseEnv: NodeJS.ProcessEnv | undefined;

  constructor(private readonly cfg: FenceAgentConfig, opts: FenceAgentDriverOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.baseEnv = opts.env;
  }

  /** Made when an agent runs, not with the driver: host HA makes a driver per host per eligibility check (a copy of the environment each was a tenth of the CLC's CPU at 2,000 hosts). */
  private get env(): NodeJS.ProcessEnv {
    return agentEnv(this.baseEnv ?? process.env);
  }

  async status(): Promise<PowerState> {
    const r = await this.run('status');
    return r.state ?? 'on';
  }

  async on(): Promise<void> {
    await this.run('on');
  }

  async off(): Promise<PowerOffResult> {
    const r = await this.run('off');
    return { alreadyOff: r.alreadyOff };
  }

  async reboot(): Promise<void> {
    await this.run('reboot');
  }

  private fields(action: AgentAction) {
    return { agent: this.cfg.agent, action, target: this.cfg.target };
  }

  private run(action: AgentAction): Promise<AgentOutcome & { ok: true }> {
    const cfg = this.cfg;
    return new Promise((resolve, reject) => {
      let settled = false;
      // Every caller of fail/resolve runs from an event or timer callback, after `timer` below is set.
      const fail = (e: FerryError) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        reject(e);
      };
      const child = spawn(cfg.agent, [], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: this.env });
      let output = '';
      const collect = (b: Buffer) => {
        if (output.length < MAX_OUTPUT) output += b.toString('utf8');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const timer = this.clock.setTimer(cfg.timeoutMs, () => {
        // The whole group: fence_ipmilan runs ipmitool as a child.
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
        fail(PowerErrors.make('FenceAgentTimedOut', { ...this.fields(action), timeoutMs: cfg.timeoutMs }));
      });
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') fail(PowerErrors.make('FenceAgentNotFound', { agent: cfg.agent }));
        else fail(PowerErrors.make('FenceAgentFailed', { ...this.fields(action), detail: `could not start: ${e.code ?? e.message}` }));
      });
      child.stdin.on('error', () => {
        // The agent exited before reading its stdin; its exit code tells what happened.
      });
      child.on('close', (code, signal) => {
        if (settled) return;
        const outcome = interpretExit(action, code, signal, redact(output, cfg.password));
        if (outcome.ok) {
          settled = true;
          timer.cancel();
          resolve(outcome);
        } else {
          fail(PowerErrors.make(outcome.code, { ...this.fields(action), detail: outcome.detail }));
        }
      });
      child.stdin.end(agentStdin(cfg, action));
    });
  }
}
