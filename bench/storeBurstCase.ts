/**
 * The `store/burst` sub-measurement (issue 19): 50 updates of the CLC's store (clc.json) called at once,
 * each adding one instance record, into a state that already holds 2,000 (a CLC in the middle of a
 * queued burst of launches): group commit (shared/store/groupCommit.ts: one copy, one stringify, one
 * durable write for the batch) / the same 50 one after another, one copy and durable write each, which
 * is what every update cost before group commit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openClcStore, type ClcState, type InstanceRecord } from '../clc/state/clcStore.js';
import type { Store } from '../shared/store/store.js';

export const STORE_BURST = 50;
const HELD = 2000;

const record = (i: number): InstanceRecord => ({
  instanceId: `i-${i.toString(16).padStart(8, '0')}`, reservationId: `r-${i.toString(16).padStart(8, '0')}`, ownerId: '000000000001',
  imageId: 'emi-0a1b2c3d', vmType: 'm1.small', partition: 'cluster01', launchTime: 1_700_000_000_000 + i, launchIndex: 0, phase: 'launched',
});

export interface StoreBurstRig {
  /** STORE_BURST updates called at once (one batch). */
  burst(): Promise<void>;
  /** STORE_BURST updates one after another. */
  oneByOne(): Promise<void>;
  close(): void;
}

export async function storeBurstRig(): Promise<StoreBurstRig> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-store-burst-'));
  const store: Store<ClcState> = await openClcStore(dir);
  await store.update((d) => { for (let i = 0; i < HELD; i++) d.instances[record(i).instanceId] = record(i); });
  // Each round adds its records and drops the previous round's: the state stays at HELD + STORE_BURST.
  let round = 0;
  const change = (i: number) => (d: ClcState): void => {
    delete d.instances[record(HELD + (round - 1) * STORE_BURST + i).instanceId];
    d.instances[record(HELD + round * STORE_BURST + i).instanceId] = record(HELD + round * STORE_BURST + i);
  };
  return {
    async burst() {
      round++;
      await Promise.all(Array.from({ length: STORE_BURST }, (_, i) => store.update(change(i))));
    },
    async oneByOne() {
      round++;
      for (let i = 0; i < STORE_BURST; i++) await store.update(change(i));
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
