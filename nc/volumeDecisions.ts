/**
 * Whether the NC attaches or detaches a volume, and how a restart settles attachments left half-way
 * (issue 18). Pure: the record, the hypervisor's last word and the request in, a decision out;
 * volumeAttachments.ts carries it out. An attachment's life on the NC:
 *
 *   (none) ──attach──▶ attaching ──hypervisor attached──▶ attached ──detach──▶ detaching ──hypervisor let go──▶ (none)
 *             a coded refusal: (none) again             a coded refusal: attached again
 *
 * A state persisted before the hypervisor answered (no answer at all) is settled by what the
 * hypervisor's domain holds at the next start or reconnect (settleAttachments).
 */
import type { NcErrorCode } from './errors.js';
import type { DomainInfo } from './hypervisor/driver.js';
import type { Observed } from './instanceView.js';
import type { InstanceRecord } from './ncStore.js';
import type { NcVolumeAttachment, VolumeAttachmentSpec } from '../shared/protocol/volumes.js';

export interface Refusal {
  readonly kind: 'refuse';
  readonly code: NcErrorCode;
  readonly fields: Readonly<Record<string, string>>;
}

export type AttachDecision =
  | Refusal
  /** Already attached with this very spec: answer it again, change nothing. */
  | { readonly kind: 'existing'; readonly attachment: NcVolumeAttachment }
  /** Persist `attaching` (or keep it, on a retry), then ask the hypervisor. */
  | { readonly kind: 'attach' };

export type DetachDecision = Refusal | { readonly kind: 'detach'; readonly attachment: NcVolumeAttachment };

export interface AttachRequest extends VolumeAttachmentSpec {
  readonly instanceId: string;
}

function refuse(code: NcErrorCode, fields: Record<string, string>): Refusal {
  return { kind: 'refuse', code, fields };
}

/** Why the instance cannot take or give up a volume now (force: EC2's Force detach of a stopped one); undefined: it can. */
function instanceRefusal(host: string, rec: InstanceRecord | undefined, instanceId: string, observed: Observed, force: boolean): Refusal | undefined {
  if (!rec || rec.phase === 'terminated') return refuse('InstanceNotFound', { host, instanceId });
  if (rec.migrationState !== 'none') return refuse('InstanceMigrating', { host, instanceId, migrationState: rec.migrationState });
  const running = rec.phase === 'running' && (observed === 'running' || observed === 'paused');
  if (!running && !force) {
    const state = rec.phase !== 'running' ? rec.phase : `running in the record, ${observed} in the hypervisor`;
    return refuse('VolumeConflict', { host, instanceId, detail: `the instance is ${state}; only a running instance attaches or detaches a volume` });
  }
  return undefined;
}

/**
 * @param holders every other instance record of this node (a volume is attached once per node).
 */
export function decideAttach(
  host: string, rec: InstanceRecord | undefined, others: readonly InstanceRecord[], req: AttachRequest, observed: Observed,
): AttachDecision {
  const why = instanceRefusal(host, rec, req.instanceId, observed, false);
  if (why || !rec) return why ?? refuse('InstanceNotFound', { host, instanceId: req.instanceId });
  const conflict = (detail: string): Refusal => refuse('VolumeConflict', { host, instanceId: req.instanceId, detail });
  const holder = others.find((o) => o.instanceId !== rec.instanceId && o.phase !== 'terminated' && (o.volumes ?? []).some((v) => v.volumeId === req.volumeId));
  if (holder) return conflict(`volume ${req.volumeId} is attached to instance ${holder.instanceId}`);
  const mine = (rec.volumes ?? []).find((v) => v.volumeId === req.volumeId);
  if (mine) {
    if (mine.device !== req.device || mine.path !== req.path) return conflict(`volume ${req.volumeId} is already attached as ${mine.device}`);
    if (mine.status === 'detaching') return conflict(`volume ${req.volumeId} is being detached`);
    return mine.status === 'attached' ? { kind: 'existing', attachment: mine } : { kind: 'attach' };
  }
  const onDevice = (rec.volumes ?? []).find((v) => v.device === req.device);
  if (onDevice) return conflict(`device ${req.device} holds volume ${onDevice.volumeId}`);
  return { kind: 'attach' };
}

export function decideDetach(
  host: string, rec: InstanceRecord | undefined, req: { readonly instanceId: string; readonly volumeId: string; readonly force?: boolean | undefined }, observed: Observed,
): DetachDecision {
  const mine = rec?.phase === 'terminated' ? undefined : (rec?.volumes ?? []).find((v) => v.volumeId === req.volumeId);
  if (rec && rec.phase !== 'terminated' && !mine) return refuse('VolumeNotAttached', { host, instanceId: req.instanceId, volumeId: req.volumeId });
  const why = instanceRefusal(host, rec, req.instanceId, observed, req.force === true);
  if (why || !mine) return why ?? refuse('InstanceNotFound', { host, instanceId: req.instanceId });
  if (mine.status === 'attaching' && req.force !== true) {
    return refuse('VolumeConflict', { host, instanceId: req.instanceId, detail: `volume ${req.volumeId} is still attaching (Force detaches it)` });
  }
  return { kind: 'detach', attachment: mine };
}

export interface SettleResult {
  /** The records' volume lists after settling, by instance id (only those that changed). */
  readonly volumes: ReadonlyMap<string, NcVolumeAttachment[]>;
  /** Attached volumes the instance's domain no longer holds: attached again. */
  readonly reattach: readonly { readonly instanceId: string; readonly volume: VolumeAttachmentSpec }[];
}

/**
 * After a start or reconnect: an `attaching` or `detaching` left by a call that never answered
 * becomes what the domain holds (attached, or gone); an `attached` volume a live domain lacks (a
 * domain defined anew) is attached again, since the NC acknowledged it. Records without a domain
 * are left alone (reconcile.ts decides about them).
 */
export function settleAttachments(instances: Readonly<Record<string, InstanceRecord>>, domains: readonly DomainInfo[]): SettleResult {
  const byId = new Map(domains.map((d) => [d.id, d]));
  const volumes = new Map<string, NcVolumeAttachment[]>();
  const reattach: { instanceId: string; volume: VolumeAttachmentSpec }[] = [];
  for (const rec of Object.values(instances)) {
    const list = rec.volumes ?? [];
    const domain = byId.get(rec.instanceId);
    if (list.length === 0 || !domain || rec.phase === 'terminated') continue;
    const held = new Set((domain.volumes ?? []).map((v) => v.volumeId));
    let changed = false;
    const next: NcVolumeAttachment[] = [];
    for (const v of list) {
      const spec = { volumeId: v.volumeId, device: v.device, path: v.path };
      if (v.status === 'attached') {
        if (!held.has(v.volumeId)) reattach.push({ instanceId: rec.instanceId, volume: spec });
        next.push(v);
      } else if (held.has(v.volumeId)) {
        changed = true;
        next.push({ ...v, status: 'attached' });
      } else {
        changed = true;
      }
    }
    if (changed) volumes.set(rec.instanceId, next);
  }
  return { volumes, reattach };
}
