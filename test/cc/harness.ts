/** A CC service over fake NCs and a ManualClock, for unit tests (no network, no disk). */
import { CcService } from '../../cc/service.js';
import type { SchedulePolicy } from '../../cc/config.js';
import { initialView } from '../../cc/view.js';
import { ViewKeeper } from '../../cc/viewKeeper.js';
import { ManualClock } from '../../shared/clock.js';
import { silentLogger } from '../../shared/log.js';
import type { Resources } from '../../shared/model/resources.js';
import type { CcNode, CcRequest } from '../../shared/protocol/ccProtocol.js';
import { FakeNodes, SMALL, type FakeNc } from './fakeNodes.js';

export const PARTITION = 'cluster01';
export const CTX = { peer: 'test' } as const;

export const id = (n: number): string => `i-${n.toString(16).padStart(8, '0')}`;
export const ids = (from: number, count: number): string[] => Array.from({ length: count }, (_, k) => id(from + k));

export function runReq(instanceIds: string[], minCount = instanceIds.length, vmType: CcRequest<'ccRunInstances'>['vmType'] = SMALL, reservationId = 'r-0000000a'): CcRequest<'ccRunInstances'> {
  return { reservationId, imageId: 'emi-00000001', ownerId: 'alice', vmType, instanceIds, minCount, launchTime: 1 };
}

export interface HarnessOptions {
  readonly nodes: readonly (readonly [string, Resources, Partial<FakeNc>?])[];
  readonly policy?: SchedulePolicy;
  readonly cached?: readonly CcNode[];
  /** Poll every NC before the test starts (default true). */
  readonly poll?: boolean;
  /** CcServiceOptions.freshMs (default: the service's). */
  readonly freshMs?: number;
}

export async function harness(opts: HarnessOptions) {
  const fake = new FakeNodes();
  for (const [host, capacity, init] of opts.nodes) fake.add(host, capacity, init);
  const hosts = opts.nodes.map(([h]) => h);
  const clock = new ManualClock(1_000_000);
  const logger = silentLogger();
  const keeper = new ViewKeeper({ initial: initialView(PARTITION, hosts, opts.cached), nodes: fake, clock, logger });
  const service = new CcService({ keeper, nodes: fake, clock, logger, policy: opts.policy ?? 'spread', ncTimeoutMs: 500,
    ...(opts.freshMs !== undefined ? { freshMs: opts.freshMs } : {}) });
  if (opts.poll ?? true) await keeper.refreshHosts(hosts, 500);
  fake.calls.length = 0;
  const node = (host: string): CcNode => {
    const n = keeper.get().entries.find((e) => e.node.host === host)?.node;
    if (!n) throw new Error(`no node ${host} in the view`);
    return n;
  };
  return {
    fake, clock, keeper, service, ops: service.ops, node,
    run: (req: CcRequest<'ccRunInstances'>) => service.ops.ccRunInstances(req, CTX),
    /** Lets background refreshes finish. */
    settle: () => keeper.idle(),
  };
}

/** A promise with its resolver, for holding a fake NC's answer. */
export function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => { open = r; });
  return { promise, open };
}
