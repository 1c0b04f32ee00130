/**
 * The leader's duties (shared/leader/leaderDuties.ts) on the injected clock: started when the replica
 * leads, stopped at once when it does not (their timers gone before reconcile returns, even in the
 * middle of a start), made afresh per term, never two terms' duties at once; the gate's waiters are
 * refused on the loss.
 */
import { describe, expect, it } from 'vitest';
import { LeaderDuties, type Duty } from '../../../shared/leader/leaderDuties.js';
import { ManualClock, type TimerHandle } from '../../../shared/clock.js';
import { silentLogger } from '../../../shared/log.js';

/** A duty that ticks on the clock while it runs, as HA's loop and the event watcher do. */
class TickingDuty implements Duty {
  ticks = 0;
  starts = 0;
  stops = 0;
  private timer: TimerHandle | undefined;
  private running = false;
  /** A start that waits for the test (HA's start awaits the CCs). */
  gate: Promise<void> = Promise.resolve();

  constructor(readonly name: string, private readonly clock: ManualClock, readonly log: string[]) {}

  async start(): Promise<void> {
    this.starts++;
    this.log.push(`start ${this.name}`);
    this.running = true;
    await this.gate;
    if (!this.running) return;
    this.schedule();
  }

  stop(): Promise<void> {
    this.stops++;
    this.log.push(`stop ${this.name}`);
    this.running = false;
    this.timer?.cancel();
    return Promise.resolve();
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(100, () => {
      this.ticks++;
      this.schedule();
    });
  }
}

function setUp() {
  const clock = new ManualClock(0);
  let leads = false;
  const log: string[] = [];
  const made: TickingDuty[][] = [];
  let lost = 0;
  const duties = new LeaderDuties({
    leadership: { leading: () => leads },
    duties: () => {
      const term = [new TickingDuty('ha', clock, log), new TickingDuty('watcher', clock, log)];
      made.push(term);
      return term;
    },
    onLost: () => { lost++; },
    logger: silentLogger(),
  });
  return { clock, duties, log, made, lost: () => lost, lead: (l: boolean) => { leads = l; duties.reconcile(); } };
}

describe('LeaderDuties', () => {
  it('a follower runs nothing', async () => {
    const t = setUp();
    t.duties.reconcile();
    await t.duties.ready();
    expect(t.made).toEqual([]);
    expect(t.duties.running()).toBe(false);
  });

  it('starts the duties in order when the replica leads; they tick; a second reconcile changes nothing', async () => {
    const t = setUp();
    t.lead(true);
    t.duties.reconcile();
    await t.duties.ready();
    expect(t.log).toEqual(['start ha', 'start watcher']);
    t.clock.advance(250);
    expect(t.made[0]?.map((d) => d.ticks)).toEqual([2, 2]);
    expect(t.made).toHaveLength(1);
  });

  it('stops every duty at once when leadership is lost: no tick after, the gate told once', async () => {
    const t = setUp();
    t.lead(true);
    await t.duties.ready();
    t.lead(false);
    // Synchronously: reconcile returned with every duty stopped.
    expect(t.made[0]?.map((d) => d.stops)).toEqual([1, 1]);
    expect(t.lost()).toBe(1);
    t.clock.advance(1000);
    expect(t.made[0]?.map((d) => d.ticks)).toEqual([0, 0]);
    t.duties.reconcile();
    expect(t.lost()).toBe(1);
  });

  it('a loss in the middle of a start: the rest never starts, the one starting schedules nothing', async () => {
    const t = setUp();
    let release!: () => void;
    const blocked = new Promise<void>((r) => { release = r; });
    t.lead(true);
    // Starts run after the previous term's stops settled (a microtask later): block the first one.
    const [ha, watcher] = t.made[0] as [TickingDuty, TickingDuty];
    ha.gate = blocked;
    for (let i = 0; i < 5 && ha.starts === 0; i++) await Promise.resolve();
    expect(ha.starts).toBe(1);
    t.lead(false);
    release();
    await t.duties.stop();
    t.clock.advance(1000);
    expect([ha.ticks, watcher.ticks]).toEqual([0, 0]);
    expect(watcher.starts).toBe(0);
  });

  it('leads again: a new set of duties, started after the old term stopped', async () => {
    const t = setUp();
    t.lead(true);
    await t.duties.ready();
    t.lead(false);
    t.lead(true);
    await t.duties.ready();
    expect(t.made).toHaveLength(2);
    expect(t.duties.termsStarted()).toBe(2);
    expect(t.log).toEqual(['start ha', 'start watcher', 'stop ha', 'stop watcher', 'start ha', 'start watcher']);
    t.clock.advance(150);
    expect(t.made[1]?.map((d) => d.ticks)).toEqual([1, 1]);
    expect(t.made[0]?.map((d) => d.ticks)).toEqual([0, 0]);
  });
});

describe('LeaderDuties start failures', () => {
  it('a failed start is logged and handed to ready(); the duties after it still start', async () => {
    const clock = new ManualClock(0);
    const log: string[] = [];
    const ok = new TickingDuty('watcher', clock, log);
    const duties = new LeaderDuties({
      leadership: { leading: () => true },
      duties: () => [{ name: 'webhook', start: () => Promise.reject(new Error('events store not writable')), stop: () => Promise.resolve() }, ok],
      logger: silentLogger(),
    });
    duties.reconcile();
    expect((await duties.ready())?.message).toBe('events store not writable');
    expect(ok.starts).toBe(1);
    clock.advance(100);
    expect(ok.ticks).toBe(1);
  });
});
