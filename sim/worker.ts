/** A worker thread of `npm run sim`: runs the seeds it is sent, answers one summary per seed. */
import { parentPort, workerData } from 'node:worker_threads';
import { runSeed } from './runSeed.js';
import type { SeedSummary } from './report.js';

const port = parentPort;
if (!port) throw new Error('sim/worker.ts runs as a worker thread');
port.on('message', (seed: number | null) => {
  if (seed === null) {
    port.close();
    return;
  }
  const careless = (workerData as { carelessOperator?: boolean } | null)?.carelessOperator === true;
  void runSeed(seed, { carelessOperator: careless }).then((r) => {
    const summary: SeedSummary = { seed, violations: r.violations, unsafe: r.unsafe.length, steps: r.steps, traceHash: r.traceHash, coverage: r.coverage };
    port.postMessage(summary);
  });
});
