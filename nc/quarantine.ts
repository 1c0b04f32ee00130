/**
 * Quarantine (issue 18) as pure decisions over the NC's snapshot (STYLE habit 1): whether the node
 * may be quarantined or released, and whether a change of its maintenance state is allowed while it
 * is quarantined. The runner (nodeController.ts) persists what is decided, then replies.
 *
 * | request            | node                                              | decision                                   |
 * |--------------------|---------------------------------------------------|--------------------------------------------|
 * | quarantine         | already quarantined                               | refused NodeQuarantined (nothing changes)  |
 * | quarantine         | source of an unfinished plan, or holds Incoming   | refused MigrationInProgress                |
 * | quarantine         | otherwise                                         | quarantine {since: now, reason}, disabled  |
 * | release            | not quarantined                                   | refused NodeNotQuarantined                 |
 * | release            | quarantined                                       | quarantine cleared; node stays disabled    |
 * | modify enabled     | quarantined                                       | refused NodeQuarantined                    |
 */
import type { ErrorFields } from '../shared/errors/registry.js';
import type { NodeState } from '../shared/protocol/common.js';
import { FINAL_ITEM_STATES } from '../shared/protocol/migrationProtocol.js';
import type { NcRequest, Quarantine } from '../shared/protocol/ncProtocol.js';
import type { NcErrorCode } from './errors.js';
import type { NcSnapshot } from './ncStore.js';

export type QuarantineRequest = NcRequest<'ncQuarantineNode'>;

export type QuarantineDecision =
  | { readonly kind: 'refuse'; readonly code: NcErrorCode; readonly fields: ErrorFields }
  /** Persist `quarantine` (undefined: cleared) and `nodeState` in one write. */
  | { readonly kind: 'change'; readonly quarantine: Quarantine | undefined; readonly nodeState: NodeState };

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Migrations that involve this node and have not ended: as a source (a plan item not final) or a destination (an Incoming record). */
export function unfinishedMigrations(snapshot: NcSnapshot): string[] {
  const asSource = Object.values(snapshot.plans).filter((p) => p.items.some((i) => !FINAL_ITEM_STATES.includes(i.state))).map((p) => p.migrationId);
  const asDestination = Object.values(snapshot.incoming).map((r) => r.migrationId);
  return [...new Set([...asSource, ...asDestination])].sort();
}

export function decideQuarantine(host: string, snapshot: NcSnapshot, req: QuarantineRequest, now: number): QuarantineDecision {
  const held = snapshot.quarantine;
  if (!req.quarantined) {
    if (held === undefined) return { kind: 'refuse', code: 'NodeNotQuarantined', fields: { host, detail: 'there is no quarantine to lift; nothing was changed' } };
    // Lifting the quarantine is not enabling: the node stays out of service until an administrator enables it.
    return { kind: 'change', quarantine: undefined, nodeState: snapshot.nodeState };
  }
  if (held !== undefined) {
    return { kind: 'refuse', code: 'NodeQuarantined', fields: { host, since: iso(held.since), detail: `it is already quarantined (${held.reason || 'no reason given'}); nothing was changed` } };
  }
  const migrations = unfinishedMigrations(snapshot);
  if (migrations.length > 0) {
    return {
      kind: 'refuse', code: 'MigrationInProgress',
      fields: { subject: `node ${host}`, migrationId: `${migrations.join(', ')} (cancel it, or wait for it to end, then quarantine the node)` },
    };
  }
  return { kind: 'change', quarantine: { since: now, reason: req.reason }, nodeState: 'disabled' };
}

/** A maintenance-state change the quarantine forbids (enabling), or undefined when it may go on. */
export function quarantineForbids(host: string, snapshot: NcSnapshot, stateName: NodeState): { readonly code: NcErrorCode; readonly fields: ErrorFields } | undefined {
  const held = snapshot.quarantine;
  if (held === undefined || stateName !== 'enabled') return undefined;
  return { code: 'NodeQuarantined', fields: { host, since: iso(held.since), detail: 'a quarantined node cannot be enabled; lift the quarantine first (UnquarantineNode), then enable it' } };
}
