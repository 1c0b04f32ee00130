/** Picks the hypervisor adapter from configuration. */
import type { Logger } from '../shared/log.js';
import type { HypervisorConfig } from './config.js';
import type { HypervisorDriver } from './hypervisor/driver.js';
import { LibvirtDriver } from './hypervisor/libvirt/libvirtDriver.js';
import { SimDriver } from './hypervisor/sim/simDriver.js';

export interface DriverContext {
  readonly logger: Logger;
  /** This host's address, reported as HostInfo.host by adapters that cannot tell it themselves. */
  readonly host: string;
}

export function createDriver(config: HypervisorConfig, ctx: DriverContext): HypervisorDriver {
  switch (config.kind) {
    case 'sim':
      ctx.logger.info({ socket: config.socket }, 'using the simulated hypervisor');
      return new SimDriver({ socketPath: config.socket });
    case 'libvirt':
      ctx.logger.info({ uri: config.uri, migrationTlsDir: config.migrationTlsDir, tunnel: config.tunnel }, 'using libvirt');
      return new LibvirtDriver({
        uri: config.uri, host: ctx.host, migrationTlsDir: config.migrationTlsDir, guestMemoryCapMiB: config.guestMemoryCapMiB,
        migrationBandwidthMiBs: config.migrationBandwidthMiBs, tunnel: config.tunnel, diskDir: config.diskDir, directKernel: config.directKernel,
      });
  }
}
