/** A worker thread of `npm run sim`: runs the seeds it is sent, answers one summary per seed. */
import { parentPort, workerData } from 'node:worker_threads';
import { runSeed } from './runSeed.js';
import type { SeedJob, SeedSummary } from './report.js';
import { scaleSettings } from './scale.js';

const port = parentPort;
// A developer's error (the file run directly), not an operator's: the simulator is a test tool.
if (!port) throw new Error('sim/worker.ts runs as a worker thread');
port.on('message', (job: SeedJob | null) => {
  if (job === null) {
    port.close();
    return;
  }
  const { seed, hosts } = job;
  const careless = (workerData as { carelessOperator?: boolean } | null)?.carelessOperator === true;
  void runSeed(seed, { carelessOperator: careless, ...(hosts === undefined ? {} : { settings: scaleSettings(seed, hosts) }) }).then((r) => {
    const summary: SeedSummary = { seed, violations: r.violations, unsafe: r.unsafe.length, steps: r.steps, traceHash: r.traceHash, coverage: r.coverage };
    port.postMessage(summary);
  });
});
