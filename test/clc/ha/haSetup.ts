/**
 * For tests: host HA's runner and operator facade over a CLC store and a BMC store, with the
 * provider and service actions the test gives (often `notWiredHa()`, notWired.ts). The running CLC
 * builds the same pieces with the real provider in clc/clcCore.ts.
 */
import { HaControl } from '../../../clc/ha/haControl.js';
import type { HaProvider, HaServiceActions } from '../../../clc/ha/haProvider.js';
import { haSectionOf, HaRunner } from '../../../clc/ha/haRunner.js';
import { openBmcStore, type BmcState } from '../../../clc/ha/power/bmcStore.js';
import type { ClcState } from '../../../clc/state/clcStore.js';
import type { Clock } from '../../../shared/clock.js';
import type { Store } from '../../../shared/store/store.js';

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
