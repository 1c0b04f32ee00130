/**
 * Seeds that once violated an invariant, with what they found. They run in every `npm test`
 * (test/sim/simulation.test.ts); a seed stays here after its bug is fixed.
 */
export interface RegressionSeed {
  readonly seed: number;
  readonly found: string;
}

export const REGRESSION_SEEDS: readonly RegressionSeed[] = [
  {
    seed: 2,
    found: 'invariant 2 (runs twice): an ncRunInstance delayed past its timeout arrived after the CC\'s settling terminate '
      + 'had answered InstanceNotFound and the CC had re-placed the instance on another node; fixed by fencing the id on the NC',
  },
  { seed: 216, found: 'invariant 2 (runs twice): same late-run race as seed 2' },
];
