import { describe, expect, it } from 'vitest';
import { Mailbox } from '../../shared/mailbox.js';

describe('mailbox', () => {
  it('runs one task at a time, in arrival order, past failures', async () => {
    const m = new Mailbox();
    const log: string[] = [];
    let active = 0;
    const task = (name: string, fail = false) => async () => {
      active++;
      expect(active).toBe(1);
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`end ${name}`);
      active--;
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([m.run(task('a')), m.run(task('b', true)), m.run(task('c'))]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(m.size).toBe(0);
  });

  it('idle() waits for everything posted so far', async () => {
    const m = new Mailbox();
    let done = false;
    void m.run(async () => { await new Promise((r) => setTimeout(r, 10)); done = true; });
    await m.idle();
    expect(done).toBe(true);
  });
});
