/**
 * The host heartbeat of a libvirt host (host HA, issue 15): a process of its own, beside libvirtd
 * and the NC, that every intervalMs rewrites `<storage>/<host>/heartbeat` and keeps one activity
 * link per running VM (beatPlan.ts). It depends on neither the NC nor libvirtd: it reads libvirt's
 * status files and /proc, so it beats while the host lives and stops only with the host (or its
 * own death, which the VMs' links then outlive). Timers come from the injected clock; file access
 * sits behind two narrow interfaces with real adapters in hostFiles.ts.
 */
import type { Clock, TimerHandle } from '../../../shared/clock.js';
import type { Logger } from '../../../shared/log.js';
import { planBeat } from './beatPlan.js';
import type { DomainStatus } from './domainStatus.js';

/** Which QEMUs run on this host now. */
export interface HostProbe {
  runningDomains(): Promise<DomainStatus[]>;
}

/** This host's directory on shared storage. */
export interface BeatFiles {
  /** The activity links there now: file name -> target. */
  links(): Promise<Map<string, string>>;
  writeHeartbeat(contents: string): Promise<void>;
  /** Points `name` at `target`, replacing an older link atomically. */
  link(name: string, target: string): Promise<void>;
  unlink(name: string): Promise<void>;
}

export interface HeartbeatConfig {
  readonly host: string;
  readonly storageDir: string;
  readonly intervalMs: number;
  readonly pid: number;
}

export class HeartbeatAgent {
  private timer: TimerHandle | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly config: HeartbeatConfig,
    private readonly clock: Clock,
    private readonly probe: HostProbe,
    private readonly files: BeatFiles,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer || this.stopped) return;
    const loop = (): void => {
      this.round = this.beat().finally(() => {
        this.round = undefined;
        if (!this.stopped) this.timer = this.clock.setTimer(this.config.intervalMs, loop);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.round;
  }

  /** One round; never throws. The heartbeat is written even when the domains cannot be read. */
  async beat(): Promise<void> {
    const domains = await this.probe.runningDomains().catch((e: unknown) => {
      this.log.warn({ err: e }, 'could not read the running domains; activity links left as they are');
      return undefined;
    });
    const links = domains === undefined ? new Map<string, string>() : await this.files.links().catch((e: unknown) => {
      this.log.warn({ err: e }, 'could not list the activity links');
      return undefined;
    });
    const plan = planBeat({ ...this.config, now: this.clock.now(), domains: links === undefined ? undefined : domains, links: links ?? new Map() });
    const writes = [
      this.files.writeHeartbeat(plan.heartbeat),
      ...[...plan.link].map(([name, target]) => this.files.link(name, target)),
      ...plan.unlink.map((name) => this.files.unlink(name)),
    ];
    for (const r of await Promise.allSettled(writes)) {
      if (r.status === 'rejected') this.log.warn({ err: r.reason }, 'heartbeat write failed');
    }
    if (plan.link.size > 0 || plan.unlink.length > 0) this.log.info({ link: [...plan.link.keys()], unlink: plan.unlink }, 'activity links changed');
  }
}
