/**
 * Invariant 10b (issue 21): power fencing is issued only by the leader holding a live lease. Checked
 * as each power action (on, off, reboot) leaves a CLC replica for its BMC, against etcd as it is at
 * that moment: the replica's election key must still exist with the epoch it was elected with.
 */
import type { Violation } from './invariants.js';
import type { SimEtcd } from './simEtcd.js';

/** The violation, if `replica` (last elected with `term`, or never) sends power `action` to `host` off a live lease. */
export function powerOffLease(etcd: SimEtcd, replica: string, term: { readonly key: string; readonly epoch: number } | undefined, action: string, host: string): Violation | undefined {
  if (term !== undefined && etcd.holds(term.key, term.epoch)) return undefined;
  return { invariant: '10 power action off the lease', detail: `${replica} sent power ${action} to ${host} while it held no live lease at etcd (epoch ${term?.epoch ?? 'none'})` };
}
