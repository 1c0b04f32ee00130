/**
 * Host HA's invariants (issue 7, 4 and 5), from the CLC's durable clc.json and the cloud's truth:
 *  4a a restart elsewhere (ccRunInstances with restartFrom) is sent only for a host HA holds FENCED
 *     durably, and never while one of the restarted instances still runs on it;
 *  4b a host HA holds FENCED runs nothing;
 *  5  when a host enters RECOVERING, REMEDIATING or FENCING by HA's own decision, the partition's hosts under
 *     remediation (RECOVERING, REMEDIATING, FENCING; an operator's FenceHost is not counted: the guard does not
 *     apply to it) are within the storm bound (maxUnhealthy resolved against the watched hosts).
 * A BMC that lies, or a careless operator, puts a host outside what any fencing can guarantee: what
 * follows from it is reported as "unsafe by BMC lie / operator", not as Ferry's violation.
 */
import type { ClcState } from '../clc/state/clcStore.js';
import type { HaState } from '../clc/ha/hostHaState.js';
import { DEFAULT_MAX_UNHEALTHY, maxUnhealthySchema, resolveLimit } from '../clc/ha/stormGuard.js';
import type { Violation } from './invariants.js';
import type { HostTruth } from './truth.js';

export type HaSectionTruth = ClcState['ha'];

const REMEDIATING: ReadonlySet<HaState> = new Set(['RECOVERING', 'REMEDIATING', 'FENCING']);
const NOT_COUNTED: ReadonlySet<HaState> = new Set(['DISABLED', 'INELIGIBLE']);

const byOperator = (reason: string): boolean => reason.startsWith('FenceHost by');

/** 4a, at the moment the CLC sends a restart: `restartFrom` hosts must be durably FENCED and run none of `ids`. */
export function checkRestart(ha: HaSectionTruth | undefined, truth: readonly HostTruth[], restartFrom: readonly string[], ids: readonly string[]): Violation[] {
  const out: Violation[] = [];
  for (const h of restartFrom) {
    const state = ha?.hosts[h]?.state;
    if (state !== 'FENCED') out.push({ invariant: '4 restart before fence', detail: `restart of ${ids.join(',')} from ${h} sent while HA holds it ${state ?? 'unknown'}` });
    const running = truth.find((t) => t.host === h)?.domains.filter((d) => d.state === 'running' && ids.includes(d.id)).map((d) => d.id) ?? [];
    if (running.length > 0) out.push({ invariant: '4 restart while running', detail: `restart of ${running.join(',')} from ${h} sent while it runs there` });
  }
  return out;
}

/** 4b and 5, every step; `previous` is each host's HA state at the last step (updated here). */
export function checkHaStep(ha: HaSectionTruth | undefined, truth: readonly HostTruth[], previous: Map<string, HaState>): Violation[] {
  if (!ha) return [];
  const out: Violation[] = [];
  const records = Object.values(ha.hosts);
  for (const r of records) {
    if (r.state !== 'FENCED') continue;
    const running = truth.find((t) => t.host === r.host)?.domains.filter((d) => d.state === 'running').map((d) => d.id) ?? [];
    if (running.length > 0) out.push({ invariant: '4 fenced host runs', detail: `${r.host} is FENCED (by ${r.fencedBy ?? '?'}) but runs ${running.join(',')}` });
  }
  for (const partition of new Set(records.map((r) => r.partition))) {
    const mine = records.filter((r) => r.partition === partition);
    const entered = mine.filter((r) => REMEDIATING.has(r.state) && previous.get(r.host) !== r.state && !byOperator(r.reason));
    if (entered.length === 0) continue;
    const text = ha.partitions[partition]?.maxUnhealthy ?? ha.global.maxUnhealthy;
    const max = text === undefined ? DEFAULT_MAX_UNHEALTHY : maxUnhealthySchema.parse(text);
    const counted = mine.filter((r) => !NOT_COUNTED.has(r.state)).length;
    const remediating = mine.filter((r) => REMEDIATING.has(r.state) && !byOperator(r.reason));
    const limit = resolveLimit(max, counted);
    if (remediating.length > limit) {
      out.push({ invariant: '5 storm bound', detail: `${partition}: ${remediating.map((r) => `${r.host} ${r.state}`).join(', ')} under remediation, more than maxUnhealthy ${text ?? 'default'} of ${counted} (= ${limit})` });
    }
  }
  previous.clear();
  for (const r of records) previous.set(r.host, r.state);
  return out;
}
