/**
 * Builds host HA's runner and operator facade over the CLC's store and `<state-dir>/bmc.json`. The
 * provider and service actions come from the caller: clc/main.ts passes `notWiredHa()` until the
 * real ones exist (that call is the one seam to swap).
 */
import type { Clock } from '../../shared/clock.js';
import type { Store } from '../../shared/store/store.js';
import type { ClcState } from '../state/clcStore.js';
import { HaControl } from './haControl.js';
import type { HaProvider, HaServiceActions } from './haProvider.js';
import { haSectionOf, HaRunner } from './haRunner.js';
import { openBmcStore, type BmcState } from './power/bmcStore.js';

export interface HaSetupOptions {
  readonly store: Store<ClcState>;
  readonly clock: Clock;
  readonly partitions: readonly string[];
  readonly provider: HaProvider;
  readonly actions: HaServiceActions;
  /** `<state-dir>`, for bmc.json; or an already opened BMC store. */
  readonly bmc: string | Store<BmcState>;
}

export async function setUpHa(opts: HaSetupOptions): Promise<{ readonly control: HaControl; readonly runner: HaRunner; readonly bmc: Store<BmcState> }> {
  const bmc = typeof opts.bmc === 'string' ? await openBmcStore(opts.bmc) : opts.bmc;
  const store = haSectionOf(opts.store);
  const runner = new HaRunner({ store, provider: opts.provider, actions: opts.actions, clock: opts.clock });
  const partitions = [...opts.partitions];
  const control = new HaControl({ store, bmc, runner, clock: opts.clock, partitions: () => partitions });
  return { control, runner, bmc };
}
