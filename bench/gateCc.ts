/**
 * The CC of the `api/queued` sub-case (bench/apiQueued.ts): the node being disabled and another with
 * plenty of room (every launch starts there), a ccModifyNode
 * (the CLC's DisableService) that waits until the bench releases it, and ccRunInstances started on
 * the node in the order they arrive. What the CLC does meanwhile is the measurement: it must hold
 * every RunInstances at its partition gate behind the pending DisableService, lose none, and send
 * them on in the order it admitted them.
 */
import type express from 'express';
import { silentLogger } from '../shared/log.js';
import { mountWireService } from '../shared/wire/server.js';
import type { WireObject } from '../shared/wire/wireValue.js';
import { CC_PATH } from '../shared/wire/transport.js';

const ROOM = { cores: 1_000_000, memoryMiB: 1_000_000_000, diskGiB: 1_000_000_000 };

/** `host` is the node the bench disables; launches go to `spare`. */
export function gateCc(app: express.Express, host: string, spare = '127.0.64.51'): void {
  let nodeState: 'enabled' | 'disabled' = 'enabled';
  let modifyCalls = 0;
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => { release = r; });
  const runs: string[] = [];
  const instances: WireObject[] = [];
  const node = (h = host): WireObject => ({
    host: h, partition: 'cluster01', nodeState: h === host ? nodeState : 'enabled', reachable: true, healthy: true, lastSeen: Date.now(),
    capacity: ROOM, used: { cores: 0, memoryMiB: 0, diskGiB: 0 }, instances: [],
  });
  const matrix = (vmTypes: unknown): WireObject[] => (Array.isArray(vmTypes) ? vmTypes as { name: string; cores: number; memoryMiB: number; diskGiB: number }[] : [])
    .map((t) => ({ vmType: t.name, max: 100_000, available: 100_000, cores: t.cores, memoryMiB: t.memoryMiB, diskGiB: t.diskGiB }));
  app.post('/release', (_req, res) => { release(); res.send('released\n'); });
  app.get('/seen', (_req, res) => { res.json({ modifyCalls, runs }); });
  mountWireService(app, {
    path: CC_PATH, logger: silentLogger(), handlers: {
      ccDescribeNodes: () => Promise.resolve({ partition: 'cluster01', nodes: [node(), node(spare)] }),
      ccDescribeResources: (body) => Promise.resolve({ partition: 'cluster01', matrix: matrix(body.vmTypes) }),
      ccDescribeInstances: () => Promise.resolve({ partition: 'cluster01', instances, complete: true }),
      ccSetFencedHosts: (body) => Promise.resolve({ hosts: Array.isArray(body.hosts) ? body.hosts : [] }),
      ccModifyNode: async (body) => {
        modifyCalls++;
        await released;
        const previousState = nodeState;
        nodeState = body.stateName === 'disabled' ? 'disabled' : 'enabled';
        return { previousState, node: node(), matrix: matrix(body.vmTypes) };
      },
      ccRunInstances: (body) => {
        const ids = (body.instanceIds as string[]);
        runs.push(String(body.reservationId));
        const started = ids.map((instanceId) => ({
          instanceId, reservationId: body.reservationId, imageId: body.imageId, ownerId: body.ownerId, vmType: body.vmType,
          state: 'running', hypervisorState: 'running', launchTime: body.launchTime, migrationState: 'none',
          host: spare, partition: 'cluster01', migrationSource: '', migrationDestination: '',
        } as WireObject));
        instances.push(...started);
        return Promise.resolve({ instances: started });
      },
    },
  });
}
