/**
 * Asks several CCs the same question at once. A partition that fails is set aside with its error
 * and named in one log line, so describes still answer for the partitions that did.
 */
import type { Logger } from 'pino';
import type { FerryError } from '../../shared/errors/registry.js';
import { translateCcFailure } from './ccFaults.js';
import type { ClcCcOp, ClcCcRequest, ClcCcResponse } from './ccContract.js';
import type { Clusters } from './clusters.js';

export interface FanOut<T> {
  /** Answers by partition, in the order asked. */
  readonly answers: ReadonlyMap<string, T>;
  readonly unavailable: ReadonlyMap<string, FerryError>;
}

export async function askPartitions<O extends ClcCcOp>(
  clusters: Clusters, partitions: readonly string[], op: O, req: ClcCcRequest<O>, logger: Logger,
): Promise<FanOut<ClcCcResponse<O>>> {
  const settled = await Promise.allSettled(partitions.map((p) => clusters.call(p, op, req)));
  const answers = new Map<string, ClcCcResponse<O>>();
  const unavailable = new Map<string, FerryError>();
  settled.forEach((s, i) => {
    const partition = partitions[i] as string;
    if (s.status === 'fulfilled') {
      answers.set(partition, s.value);
    } else {
      const err = translateCcFailure(s.reason, partition, op);
      unavailable.set(partition, err);
      logger.warn({ partition, op, code: err.code, detail: err.message }, `partition ${partition} did not answer ${op}: ${err.message}`);
    }
  });
  return { answers, unavailable };
}

export function askAllPartitions<O extends ClcCcOp>(clusters: Clusters, op: O, req: ClcCcRequest<O>, logger: Logger): Promise<FanOut<ClcCcResponse<O>>> {
  return askPartitions(clusters, clusters.partitions.map((p) => p.name), op, req, logger);
}
