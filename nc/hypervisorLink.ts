/**
 * The NC's connection to its hypervisor: health, last host description, background reconnect on
 * the injected clock, and the translation of HypervisorErrors into NcErrors (the NC's boundary).
 */
import type { Clock, TimerHandle } from '../shared/clock.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { Logger } from '../shared/log.js';
import type { Resources } from '../shared/model/resources.js';
import type { HostInfo, HypervisorDriver } from './hypervisor/driver.js';
import { HypervisorErrors } from './hypervisor/errors.js';
import { NcErrors } from './errors.js';

/** Link states; every change goes through setState, which logs it. */
export type LinkState =
  /** Never connected since start; the first connect() decides. */
  | 'connecting'
  /** Lost, or the first connect failed: calls are refused and a reconnect is scheduled. */
  | 'down'
  /** connect() answered and the last call did not fail for connectivity. */
  | 'up'
  /** stop() was called: no more reconnects. */
  | 'stopped';

export interface RetryPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** Short enough that a restarted hypervisor is noticed within a CC poll or two. */
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ initialMs: 500, maxMs: 5000 });

export interface HypervisorLinkOptions {
  readonly driver: HypervisorDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly host: string;
  readonly retry?: RetryPolicy;
  /** Runs after every successful (re)connect, e.g. re-adoption; a failure counts as still down. */
  readonly onConnected: () => Promise<void>;
}

export class HypervisorLink {
  private state: LinkState = 'connecting';
  private hostInfo: HostInfo | undefined;
  private timer: TimerHandle | undefined;
  private delayMs: number;
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: HypervisorLinkOptions) {
    this.retry = opts.retry ?? DEFAULT_RETRY;
    this.delayMs = this.retry.initialMs;
  }

  get healthy(): boolean {
    return this.state === 'up';
  }

  /** Capacity from the last successful connect(); undefined if the hypervisor was never reached. */
  get capacity(): Resources | undefined {
    return this.hostInfo?.capacity;
  }

  get kind(): string | undefined {
    return this.hostInfo?.hypervisor;
  }

  /** Tries to connect once; on failure stays down and keeps retrying in the background. */
  async connect(): Promise<boolean> {
    if (this.state === 'stopped') return false;
    this.cancelTimer();
    try {
      const info = await this.opts.driver.connect();
      if (info.host !== this.opts.host) {
        this.opts.logger.warn({ reported: info.host, configured: this.opts.host }, 'hypervisor reports another host address');
      }
      this.hostInfo = info;
      this.setState('up', 'connected');
      await this.opts.onConnected();
      this.delayMs = this.retry.initialMs;
      return this.healthy;
    } catch (e) {
      this.markDown(e);
      return false;
    }
  }

  /**
   * Calls the driver while up; refuses at once while down. Connectivity failures take the link
   * down; every HypervisorError leaves as an NcError.
   */
  async call<T>(operation: string, fn: (d: HypervisorDriver) => Promise<T>): Promise<T> {
    if (this.state !== 'up') throw NcErrors.make('HypervisorUnavailable', { host: this.opts.host, detail: `link is ${this.state}` });
    try {
      return await fn(this.opts.driver);
    } catch (e) {
      if (isUnavailable(e)) this.markDown(e);
      throw translate(e, this.opts.host, operation);
    }
  }

  /** Records a connectivity failure seen by anyone and schedules a reconnect. */
  markDown(e: unknown): void {
    if (this.state === 'stopped') return;
    this.setState('down', (e as Error)?.message ?? String(e));
    this.schedule();
  }

  stop(): void {
    this.cancelTimer();
    this.setState('stopped', 'stopping');
  }

  private schedule(): void {
    if (this.timer || this.state === 'stopped') return;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.retry.maxMs, this.delayMs * 2);
    this.timer = this.opts.clock.setTimer(delay, () => {
      this.timer = undefined;
      void this.connect();
    });
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private setState(next: LinkState, reason: string): void {
    if (next === this.state) return;
    const level = next === 'down' ? 'warn' : 'info';
    this.opts.logger[level]({ from: this.state, to: next, reason }, 'hypervisor link state');
    this.state = next;
  }
}

function isUnavailable(e: unknown): boolean {
  return isFerryError(e) && (e.code === 'HypervisorUnavailable' || e.code === 'HypervisorProtocolError');
}

/** Hypervisor codes the NC has its own word for; the rest leave as HypervisorRefused. */
export function translate(e: unknown, host: string, operation: string): unknown {
  if (!isFerryError(e) || !HypervisorErrors.has(e.code)) return e;
  const detail = `${e.code}: ${e.message}`;
  switch (e.code) {
    case 'HypervisorUnavailable':
    case 'HypervisorProtocolError':
      return NcErrors.make('HypervisorUnavailable', { host, detail });
    case 'DomainExists':
      return NcErrors.make('InstanceExists', { host, instanceId: String(e.fields.id ?? '') });
    case 'InsufficientHostResources':
      return NcErrors.withMessage('InsufficientCapacity', `node ${host} cannot fit the instance: ${e.message}`, { host });
    case 'VolumeConflict':
      return NcErrors.make('VolumeConflict', { host, instanceId: String(e.fields.id ?? ''), detail: e.message });
    default:
      // The hypervisor's own code stays readable: the migration item executor tells some refusals apart.
      return NcErrors.make('HypervisorRefused', { host, operation, detail, hypervisorCode: e.code });
  }
}
