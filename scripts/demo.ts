/**
 * The demo cloud: 1 CLC, 1 CC and 3 NCs (each with its simulated-hypervisor daemon) on loopback,
 * started as detached daemons with state under .ferry-demo/, plus a few running instances.
 *   node dist/scripts/demo.js start|stop|status
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ccUrl, certsDirOf, cloudLayout, clcUrl, ensureCloudPki, type CloudLayoutOptions } from './cloudLayout.js';
import { adminQuery, DemoDaemons, runDemoCommand } from './demoDaemons.js';
import { readCredentialsFile } from '../shared/auth/credentialsFile.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const base = join(root, '.ferry-demo');
const runDir = join(base, 'run');
const CONTROLLER = '127.0.0.1';
const NODES = ['127.0.1.1', '127.0.1.2', '127.0.1.3'];
/** Prometheus metrics (docs/OPERATIONS.md "Metrics"): CLC, CC, and each NC on its own address. */
const METRICS = { clc: 9190, cc: 9191, nc: 9192 };
const layoutOptions: CloudLayoutOptions = {
  baseDir: base, controllerHost: CONTROLLER, nodeHosts: NODES,
  clcArgs: ['--metrics-port', String(METRICS.clc)], ccArgs: ['--metrics-port', String(METRICS.cc)], ncArgs: ['--metrics-port', String(METRICS.nc)],
};
const layout = cloudLayout(layoutOptions);
const url = clcUrl(CONTROLLER);
/** Written by the CLC at its first start; the CLI reads it by default. */
const credentialsPath = join(base, 'clc', 'admin.credentials');

const daemons = new DemoDaemons({ root, runDir, logDir: join(base, 'logs') });
const query = (params: Record<string, string>): Promise<string> => adminQuery(url, credentialsPath, params);

async function start(): Promise<void> {
  mkdirSync(runDir, { recursive: true });
  const pki = ensureCloudPki(layoutOptions);
  if (pki && pki.written.length > 0) console.log(`  cloud PKI            ${pki.written.length} files written to ${certsDirOf(layoutOptions)}`);
  await daemons.start(layout);
  const described = await query({ Action: 'DescribeInstances' });
  if (!described.includes('<instanceId>')) {
    await query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'm1.small', MinCount: '3', MaxCount: '3' });
    await query({ Action: 'RunInstances', ImageId: 'emi-0a1b2c3d', InstanceType: 'c1.medium', MinCount: '2', MaxCount: '2' });
    console.log('  started 5 demo instances');
  }
  console.log(`
Ferry demo cloud is up: CLC ${url}, CC ${ccUrl(layoutOptions)}, NCs ${NODES.join(', ')}.
The CLC, CC and NCs talk mutual TLS with the cloud PKI in ${certsDirOf(layoutOptions)} (docs/SECURITY.md).
Use the admin CLI from this directory:

  export PATH="${join(root, 'bin')}:$PATH" EC2_URL=${url}
  euca-describe-nodes
  euca-describe-availability-zones verbose
  euca-modify-service -s DISABLED ${NODES[0]}
  euca-run-instances emi-0a1b2c3d -n 2 -t m1.small
  euca-describe-instances

Requests are signed (AWS SigV4) with the admin credentials in ${credentialsPath}
(access key ${(await readCredentialsFile(credentialsPath)).accessKey}); the CLI reads that file when EC2_ACCESS_KEY/EC2_SECRET_KEY
are unset. For other AWS-style tools: source ${credentialsPath}

Prometheus metrics (read-only token in each daemon's state directory):
  curl -H "Authorization: Bearer $(cat ${join(base, 'clc', 'metrics.token')})" http://${CONTROLLER}:${METRICS.clc}/metrics
  (CC: port ${METRICS.cc}, token ${join(base, 'cc', 'metrics.token')}; NCs: http://127.0.1.N:${METRICS.nc}/metrics)

Logs: ${join(base, 'logs')}   Stop: scripts/demo.sh stop   Reset: scripts/demo.sh reset`);
}

async function stop(): Promise<void> {
  await daemons.stop(layout);
}

function status(): void {
  daemons.status(layout);
}

await runDemoCommand('demo', 'scripts/demo.sh [start|stop|status|reset]', {
  start,
  stop,
  status,
  reset: async () => { await stop(); rmSync(base, { recursive: true, force: true }); console.log('  demo state removed'); },
});
