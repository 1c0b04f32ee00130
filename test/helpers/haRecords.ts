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

/** A host's probe pacing as DescribeHostHA shows it (the CLC keeps it in memory, not in clc.json): ms since the epoch. */
export interface HaProbeView {
  readonly nextHealthCheckAt: number;
  readonly nextPowerCheckAt: number;
  readonly powerCheckInFlight: boolean;
}

type Query = (params: Record<string, string>) => Promise<{ readonly doc: Record<string, unknown> }>;

/** DescribeHostHA of `hosts`, as probe views by host (a time not shown is 0). */
export async function haProbesOf(query: Query, hosts: readonly string[]): Promise<Map<string, HaProbeView>> {
  const { doc } = await query({ Action: 'DescribeHostHA', MaxEvents: '0', ...Object.fromEntries(hosts.map((h, i) => [`Host.${i + 1}`, h])) });
  const set = (doc.DescribeHostHAResponse as { hostSet?: { item?: unknown } } | undefined)?.hostSet?.item;
  const items = (Array.isArray(set) ? set : set === undefined ? [] : [set]) as Record<string, string | undefined>[];
  const ms = (v: string | undefined): number => (v === undefined ? 0 : Date.parse(v));
  return new Map(items.map((i) => [i.host ?? '', {
    nextHealthCheckAt: ms(i.nextHealthCheckAt), nextPowerCheckAt: ms(i.nextPowerCheckAt), powerCheckInFlight: i.powerCheckInFlight === 'true',
  }]));
}

/** Every host's first BMC power status has answered and the next is more than a minute away. */
export async function firstPowerStatusesAnswered(query: Query, hosts: readonly string[]): Promise<boolean> {
  const probes = await haProbesOf(query, hosts);
  return hosts.every((h) => {
    const p = probes.get(h);
    return p !== undefined && !p.powerCheckInFlight && p.nextPowerCheckAt > Date.now() + 60_000;
  });
}
