/**
 * `supervision/node-health`: what host HA's read of 2,000 nodes costs the CC, in process: the CC's
 * handler (cc/service.ts, over a real ViewKeeper holding 2,000 polled nodes of 4 instances each), the
 * response validation typedServer.ts does, and the JSON encoding the wire sends (the same path
 * mountWireService takes). ccDescribeNodeHealth answering `unchanged` (a steady cluster) and
 * answering in full because one node's health moved before each read, each against ccDescribeNodes,
 * what host HA asked before (issue 19). The clock stands at the last poll: nothing is stale, no NC
 * is asked, so only the answer is timed (the read's stale check is in both).
 */
import { CcService, SERVED_OPS } from '../cc/service.js';
import { applyReport, initialView } from '../cc/view.js';
import { ViewKeeper } from '../cc/viewKeeper.js';
import type { NodeClient } from '../cc/nodeClient.js';
import { ManualClock } from '../shared/clock.js';
import { silentLogger } from '../shared/log.js';
import { typedHandlers } from '../shared/protocol/typedServer.js';
import { encodeJsonMessage } from '../shared/wire/jsonCodec.js';
import type { WireObject } from '../shared/wire/wireValue.js';
import { hostsOf, reportOf } from './pollRound.js';

export const NODE_HEALTH_NODES = 2000;
/** Host HA's health-check interval as the read's maxAgeMs (the data is fresher: no NC is asked). */
const MAX_AGE_MS = 60_000;

export interface NodeHealthRig {
  /** ccDescribeNodes {maxAgeMs}: every node with its instances, validated and encoded. */
  describeNodes(): Promise<void>;
  /** ccDescribeNodeHealth with the version held: `unchanged`. */
  healthUnchanged(): Promise<void>;
  /** ccDescribeNodeHealth after one node's health moved: the whole compact list. */
  healthChanged(): Promise<void>;
  /** Bytes of each answer as encoded: describe, health in full, unchanged. */
  readonly bytes: { readonly describeNodes: number; readonly healthFull: number; readonly healthUnchanged: number };
}

export async function nodeHealthRig(n = NODE_HEALTH_NODES): Promise<NodeHealthRig> {
  const hosts = hostsOf(n);
  const now = 1_700_000_000_000;
  const clock = new ManualClock(now);
  const reports = hosts.map((h, i) => reportOf(h, i));
  const initial = reports.reduce((v, r) => applyReport(v, r.host, r, now), initialView('bench', hosts));
  const nodes = { describe: () => Promise.reject(new Error('not polled in the bench')) } as unknown as NodeClient;
  const logger = silentLogger();
  const keeper = new ViewKeeper({ initial, nodes, clock, logger });
  const service = new CcService({ keeper, nodes, clock, logger, policy: 'spread', ncTimeoutMs: 5000, freshMs: MAX_AGE_MS });
  const handlers = typedHandlers(SERVED_OPS, service.ops);
  const ctx = { peer: 'bench' };
  /** What the wire server does with an answer: the handler, its validation, then the JSON encoding. */
  const answer = async (op: 'ccDescribeNodes' | 'ccDescribeNodeHealth', req: WireObject): Promise<{ body: WireObject; bytes: number }> => {
    const handler = handlers[op];
    if (handler === undefined) throw new Error(`bench: ${op} is not served`); // a bench set-up error, never a client's
    const body = await handler(req, ctx);
    return { body, bytes: encodeJsonMessage(`${op}Response`, body).length };
  };
  // The version host HA holds: the last full answer's (healthChanged moves it).
  let known = (await service.ops.ccDescribeNodeHealth({ maxAgeMs: MAX_AGE_MS }, ctx)).version;
  let healthy = true;
  const moveOne = (): void => {
    healthy = !healthy;
    const r = reports[0]!;
    keeper.update(r.host, (v) => applyReport(v, r.host, { ...r, healthy }, now));
  };
  const bytes = {
    describeNodes: (await answer('ccDescribeNodes', { maxAgeMs: MAX_AGE_MS })).bytes,
    healthFull: (await answer('ccDescribeNodeHealth', { maxAgeMs: MAX_AGE_MS })).bytes,
    healthUnchanged: (await answer('ccDescribeNodeHealth', { maxAgeMs: MAX_AGE_MS, knownVersion: known })).bytes,
  };
  return {
    bytes,
    async describeNodes() { await answer('ccDescribeNodes', { maxAgeMs: MAX_AGE_MS }); },
    async healthUnchanged() {
      const { body } = await answer('ccDescribeNodeHealth', { maxAgeMs: MAX_AGE_MS, knownVersion: known });
      if (body.unchanged !== true) throw new Error('bench: a steady read was not answered unchanged'); // a bench set-up error
    },
    async healthChanged() {
      moveOne();
      const { body } = await answer('ccDescribeNodeHealth', { maxAgeMs: MAX_AGE_MS, knownVersion: known });
      if (body.unchanged === true || typeof body.version !== 'string') throw new Error('bench: a moved node was answered unchanged'); // a bench set-up error
      known = body.version;
    },
  };
}
