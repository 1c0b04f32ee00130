/**
 * What the CLC's store says about host HA, read from its clc.json as a witness independent of the
 * admin API: a host's record and its event log. A read while the store is being replaced finds no
 * record (the caller polls).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HaLogEvent } from '../../clc/ha/haState.js';
import type { HaOwedRepair, HaState } from '../../clc/ha/hostHaState.js';

export interface HaRecordView {
  readonly state: HaState;
  readonly needsOperator: boolean;
  readonly owed: HaOwedRepair | null;
}

interface StoreDoc { readonly data: { readonly ha: { readonly hosts: Record<string, HaRecordView>; readonly events: HaLogEvent[] } } }

function readHa(clcBaseDir: string): StoreDoc['data']['ha'] | undefined {
  try {
    return (JSON.parse(readFileSync(join(clcBaseDir, 'clc', 'clc.json'), 'utf8')) as StoreDoc).data.ha;
  } catch {
    return undefined;
  }
}

/** `baseDir`: the cloud's directory (its CLC keeps `clc/clc.json`). */
export function haRecordOf(baseDir: string, host: string): HaRecordView | undefined {
  return readHa(baseDir)?.hosts[host];
}

export function haEventsOf(baseDir: string, host: string): HaLogEvent[] {
  return (readHa(baseDir)?.events ?? []).filter((e) => e.host === host);
}
