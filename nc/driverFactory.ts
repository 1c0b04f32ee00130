/** Picks the hypervisor adapter from configuration; the libvirt adapter will plug in here. */
import type { Logger } from '../shared/log.js';
import type { HypervisorConfig } from './config.js';
import type { HypervisorDriver } from './hypervisor/driver.js';
import { SimDriver } from './hypervisor/sim/simDriver.js';

export interface DriverContext {
  readonly logger: Logger;
}

export function createDriver(config: HypervisorConfig, ctx: DriverContext): HypervisorDriver {
  switch (config.kind) {
    case 'sim':
      ctx.logger.info({ url: config.url }, 'using the simulated hypervisor');
      return new SimDriver({ baseUrl: config.url });
  }
}
