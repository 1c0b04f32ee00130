/**
 * The two servers of the `api` bench case, each run as its own process so that neither shares the
 * load generator's event loop (as the CLC does not):
 *   node dist/bench/apiServers.js cc HOST PORT N     a CC's wire service answering ccDescribeInstances
 *                                                    with N running instances, versioned as the real CC
 *                                                    versions its listing (and the CLC's HA calls)
 *   node dist/bench/apiServers.js bare HOST PORT FILE  a bare express server answering every POST with FILE
 *   node dist/bench/apiServers.js gate HOST PORT NODE  a CC of one node NODE whose ccModifyNode (a pending
 *                                                    DisableService) answers only after POST /release;
 *                                                    it starts every ccRunInstances on NODE and keeps
 *                                                    their order (GET /seen: modify calls, run order)
 * Each prints "listening" once it listens and stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import express from 'express';
import { silentLogger } from '../shared/log.js';
import { DEFAULT_VM_TYPES } from '../shared/model/vmTypes.js';
import { mountWireService } from '../shared/wire/server.js';
import type { WireObject } from '../shared/wire/wireValue.js';
import { CC_PATH } from '../shared/wire/transport.js';
import { gateCc } from './gateCc.js';

const [mode, host, port, arg] = process.argv.slice(2) as [string, string, string, string];
const app = express();
if (mode === 'cc') {
  const n = Number(arg);
  const vmType = DEFAULT_VM_TYPES[1]!;
  const VERSION = 'bench-1';
  const instances = Array.from({ length: n }, (_, i) => ({
    instanceId: `i-${i.toString(16).padStart(8, '0')}`, reservationId: `r-${Math.floor(i / 10).toString(16).padStart(8, '0')}`, imageId: 'emi-0a1b2c3d', ownerId: '000000000000',
    vmType: { ...vmType }, state: 'running', hypervisorState: 'running', launchTime: 1_700_000_000_000 + i, migrationState: 'none',
    host: `127.0.64.${(i % 100) + 1}`, partition: 'cluster01', migrationSource: '', migrationDestination: '',
  }));
  mountWireService(app, {
    path: CC_PATH, logger: silentLogger(), handlers: {
      // As a real CC in a steady cloud answers (shared/listingVersions.ts): one version, `unchanged` to a caller holding it.
      ccDescribeInstances: (body) => Promise.resolve(body.knownVersion === VERSION
        ? { partition: 'cluster01', instances: [], complete: true, version: VERSION, unchanged: true } as WireObject
        : { partition: 'cluster01', instances, complete: true, version: VERSION }),
      ccDescribeNodes: () => Promise.resolve({ partition: 'cluster01', nodes: [] }),
      ccSetFencedHosts: (body) => Promise.resolve({ hosts: Array.isArray(body.hosts) ? body.hosts : [] }),
    },
  });
} else if (mode === 'gate') {
  gateCc(app, arg);
} else {
  const body = readFileSync(arg);
  app.use((_req, res) => { res.type('text/xml').send(body); });
}
const server = app.listen(Number(port), host, () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  process.exit(0);
});
