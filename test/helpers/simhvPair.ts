/**
 * Bare simhv daemons for migration-credential tests (no NC, no CC): each on its own loopback
 * address, with its control socket and state in `base`, fast time, TLS migrations on `tlsPort`.
 * Every process and driver started is kept in `procs` / `drivers` for the test's afterAll.
 */
import { join } from 'node:path';
import { SimDriver } from '../../nc/hypervisor/sim/simDriver.js';
import { builtEntry, spawnBuilt, type SpawnedProcess } from './spawnDaemon.js';

export class SimhvHosts {
  readonly procs: SpawnedProcess[] = [];
  readonly drivers: SimDriver[] = [];

  constructor(private readonly base: string, private readonly tlsPort: number) {}

  /** Starts simhv for `host` and returns a driver on its control socket. */
  async start(host: string): Promise<SimDriver> {
    const proc = await spawnBuilt({
      script: builtEntry('nc/hypervisor/sim/main.ts'),
      args: ['--host', host, '--socket', join(this.base, `${host}.sock`), '--tls-port', String(this.tlsPort), '--state-dir', join(this.base, host),
        '--storage-dir', join(this.base, 'storage'), '--time-scale', '0.02', '--write-interval-ms', '100'],
      readyLine: /^simhv listening on unix:(.+)$/,
    });
    this.procs.push(proc);
    const driver = new SimDriver({ socketPath: proc.ready, eventRetryMs: 100 });
    this.drivers.push(driver);
    return driver;
  }

  /** Closes every driver and kills every daemon started. */
  async stop(): Promise<void> {
    for (const d of this.drivers) await d.close();
    for (const p of this.procs) await p.kill('SIGKILL');
  }
}
