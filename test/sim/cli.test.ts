/** `npm run sim` as a command: bad flags are refused with a message and exit 2 before anything runs. */
import { describe, expect, it } from 'vitest';
import { builtEntry, runBuilt } from '../helpers/spawnDaemon.js';

describe('npm run sim (dist/sim/main.js)', () => {
  it.each([
    [['--seeds', 'x'], /--seeds must be a whole number/],
    [['--seed', '1.5'], /--seed must be a whole number/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--hosts', '0'], /--hosts must be between 1 and 5000, not 0/],
    [['--hosts', '5001'], /--hosts must be between 1 and 5000, not 5001/],
    [['--hosts', 'many'], /--hosts must be a whole number/],
  ])('%j exits 2 naming the problem', async (args, message) => {
    const r = await runBuilt(builtEntry('sim/main.ts'), args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^usage: npm run sim/m);
  });

  it('replays one seed and says whether it held', async () => {
    const r = await runBuilt(builtEntry('sim/main.ts'), ['--seed', '178'], 60_000);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^seed 178: \d+ steps, trace [0-9a-f]+, no violations$/m);
  });
});
