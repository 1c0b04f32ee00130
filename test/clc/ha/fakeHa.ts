/**
 * Hand-written fakes of the HA runner's narrow interfaces (clc/ha/haProvider.ts): a provider whose
 * answers are scripted per host, and service actions that only record. Calls land in one shared log,
 * so tests can check order ("disable h1" before "fence h1").
 */
import type { HaHostRef, HaProvider, HaServiceActions, RepairOutcome } from '../../../clc/ha/haProvider.js';
import type { ActivityOutcome } from '../../../clc/ha/hostHaState.js';

/** A scripted answer, or 'hang' (held until release()). */
type Scripted<T> = T | 'hang';

export class FakeHa implements HaProvider, HaServiceActions {
  readonly calls: string[] = [];
  readonly eligible = new Map<string, boolean>();
  /** 'fail': the source cannot tell (its CC did not answer): rejects as ccHealthSource does. */
  readonly healthy = new Map<string, Scripted<boolean | 'fail'>>();
  readonly activity = new Map<string, Scripted<ActivityOutcome>>();
  readonly recovers = new Map<string, Scripted<'ok' | 'fail'>>();
  readonly fences = new Map<string, Scripted<'ok' | 'already-off' | 'fail'>>();
  /** The BMC's power status per host (default on); 'fail' rejects. Counted apart from `calls`. */
  readonly power = new Map<string, Scripted<'on' | 'off' | 'fail'>>();
  readonly powerCalls: string[] = [];
  /** Per host, the outcomes of the next drain, evacuate or powerOn attempts, in order (then: done). */
  readonly repairs = new Map<string, ('done' | 'not-done' | 'throw' | 'hang')[]>();
  private readonly held: (() => void)[] = [];

  /** Lets every held call go on with whatever its host's script says now. */
  release(): void {
    for (const go of this.held.splice(0)) go();
  }

  get holding(): number {
    return this.held.length;
  }

  private async answer<T>(script: Map<string, Scripted<T>>, host: string, fallback: T): Promise<T> {
    let v = script.get(host) ?? fallback;
    if (v === 'hang') {
      await new Promise<void>((go) => this.held.push(go));
      v = script.get(host) ?? fallback;
      if (v === 'hang') v = fallback;
    }
    return v;
  }

  async isEligible(ref: HaHostRef) {
    const eligible = this.eligible.get(ref.host) ?? true;
    return { eligible, reason: eligible ? 'eligible' : 'no power management' };
  }

  async isHealthy(ref: HaHostRef) {
    this.calls.push(`health ${ref.host}`);
    const healthy = await this.answer(this.healthy, ref.host, true);
    if (healthy === 'fail') throw new Error(`SourceTimedOut: the CC of ${ref.partition} did not answer`);
    return { healthy, detail: healthy ? 'NC healthy' : 'NC unreachable' };
  }

  async hasActivity(ref: HaHostRef, since: number) {
    this.calls.push(`activity ${ref.host} since ${since}`);
    return { outcome: await this.answer(this.activity, ref.host, 'active'), detail: 'disk mtimes' };
  }

  async recover(ref: HaHostRef) {
    this.calls.push(`recover ${ref.host}`);
    if ((await this.answer(this.recovers, ref.host, 'ok')) === 'fail') throw new Error('FenceAgentFailed: BMC refused');
  }

  async fence(ref: HaHostRef) {
    this.calls.push(`fence ${ref.host}`);
    const r = await this.answer(this.fences, ref.host, 'ok');
    if (r === 'fail') throw new Error('FenceAgentTimedOut: BMC does not answer');
    return { alreadyOff: r === 'already-off' };
  }

  async powerStatus(ref: HaHostRef) {
    this.powerCalls.push(ref.host);
    const p = await this.answer(this.power, ref.host, 'on');
    if (p === 'fail') throw new Error('FenceAgentTimedOut: BMC does not answer');
    return { power: p, detail: `the BMC says ${p}` };
  }

  async disableHost(ref: HaHostRef) {
    this.calls.push(`disable ${ref.host}`);
  }

  private async repairOutcome(host: string): Promise<RepairOutcome> {
    let next = this.repairs.get(host)?.shift() ?? 'done';
    if (next === 'hang') {
      await new Promise<void>((go) => this.held.push(go));
      next = 'done';
    }
    if (next === 'throw') throw new Error('ServiceUnavailable: the NC does not answer');
    return { done: next === 'done', detail: next === 'done' ? 'disabled and empty' : '2 instance(s) still on it' };
  }

  async drain(ref: HaHostRef) {
    this.calls.push(`drain ${ref.host}`);
    return this.repairOutcome(ref.host);
  }

  async evacuate(ref: HaHostRef, fencedBy: 'agent' | 'operator') {
    this.calls.push(`evacuate ${ref.host} (${fencedBy})`);
    return this.repairOutcome(ref.host);
  }

  async powerOn(ref: HaHostRef) {
    this.calls.push(`powerOn ${ref.host}`);
    return this.repairOutcome(ref.host);
  }
}
