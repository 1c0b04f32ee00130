/** The second half of the simulator's seed sweep (the first is in simulation.test.ts). */
import { describe } from 'vitest';
import { sweepChunks } from './sweep.js';

describe('whole-cloud simulation, seed sweep (second half)', () => {
  sweepChunks(1100, 2);
});
