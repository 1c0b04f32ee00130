/**
 * Carries out the NC's volume decisions (volumeDecisions.ts) inside the NodeController's mailbox,
 * with its ordering rule: persist the intent (`attaching` / `detaching`), ask the hypervisor, persist
 * the outcome, then reply. A coded refusal from the hypervisor undoes the intent (nothing changed);
 * no answer at all keeps it, and the next start or reconnect settles it from the domain (settle).
 */
import { isFerryError } from '../shared/errors/registry.js';
import type { Logger } from '../shared/log.js';
import type { NcResponse } from '../shared/protocol/ncProtocol.js';
import type { NcVolumeAttachment } from '../shared/protocol/volumes.js';
import type { DomainCache } from './domainCache.js';
import { NcErrors } from './errors.js';
import type { HypervisorLink } from './hypervisorLink.js';
import { observedState } from './instanceView.js';
import type { InstanceRecord, NcSnapshot } from './ncStore.js';
import { decideAttach, decideDetach, settleAttachments, type AttachRequest, type Refusal } from './volumeDecisions.js';

export interface VolumeAttachmentsDeps {
  readonly host: string;
  readonly logger: Logger;
  readonly link: HypervisorLink;
  readonly domains: DomainCache;
  readonly snapshot: () => NcSnapshot;
  readonly persist: <R>(mutate: (draft: NcSnapshot) => R) => Promise<R>;
  /** The CC is told the instance changed. */
  readonly changed: (instanceId: string) => void;
}

function refusal(r: Refusal): Error {
  return NcErrors.make(r.code, r.fields);
}

/** Replaces (or adds, or with `next` undefined removes) the record's attachment of `volumeId`. */
function setAttachment(rec: InstanceRecord, volumeId: string, next: NcVolumeAttachment | undefined): void {
  const rest = (rec.volumes ?? []).filter((v) => v.volumeId !== volumeId);
  const list = next ? [...rest, next] : rest;
  if (list.length > 0) rec.volumes = list;
  else delete rec.volumes;
}

/** Whether a hypervisor failure proves nothing changed there (a coded refusal, not silence). */
function refusedOutright(e: unknown): boolean {
  return isFerryError(e) && e.code !== 'HypervisorUnavailable';
}

export class VolumeAttachments {
  constructor(private readonly d: VolumeAttachmentsDeps) {}

  async attach(req: AttachRequest): Promise<NcResponse<'ncAttachVolume'>> {
    const { host, snapshot } = this.d;
    const id = req.instanceId;
    const rec = snapshot().instances[id];
    const decision = decideAttach(host, rec, Object.values(snapshot().instances), req, observedState(this.d.domains.current, id));
    if (decision.kind === 'refuse') throw refusal(decision);
    if (decision.kind === 'existing') return { instanceId: id, attachment: decision.attachment };
    const spec = { volumeId: req.volumeId, device: req.device, path: req.path };
    await this.write(id, req.volumeId, { ...spec, status: 'attaching' });
    try {
      const domain = await this.d.link.call('attachVolume', (drv) => drv.attachVolume(id, spec));
      this.d.domains.note(domain);
    } catch (e) {
      if (refusedOutright(e)) await this.write(id, req.volumeId, undefined);
      throw e;
    }
    const attachment: NcVolumeAttachment = { ...spec, status: 'attached' };
    await this.write(id, req.volumeId, attachment);
    this.d.logger.info({ instanceId: id, volumeId: req.volumeId, device: req.device }, 'volume attached');
    this.d.changed(id);
    return { instanceId: id, attachment };
  }

  async detach(req: { readonly instanceId: string; readonly volumeId: string; readonly force?: boolean | undefined }): Promise<NcResponse<'ncDetachVolume'>> {
    const id = req.instanceId;
    const decision = decideDetach(this.d.host, this.d.snapshot().instances[id], req, observedState(this.d.domains.current, id));
    if (decision.kind === 'refuse') throw refusal(decision);
    const before = decision.attachment;
    await this.write(id, req.volumeId, { ...before, status: 'detaching' });
    try {
      const domain = await this.d.link.call('detachVolume', (drv) => drv.detachVolume(id, req.volumeId));
      this.d.domains.note(domain);
    } catch (e) {
      // A domain the hypervisor no longer has holds no volume: a forced detach is then done.
      const gone = isFerryError(e) && e.code === 'HypervisorRefused' && e.fields.hypervisorCode === 'DomainNotFound';
      if (!(gone && req.force === true)) {
        if (refusedOutright(e)) await this.write(id, req.volumeId, before);
        throw e;
      }
    }
    await this.write(id, req.volumeId, undefined);
    this.d.logger.info({ instanceId: id, volumeId: req.volumeId, force: req.force === true }, 'volume detached');
    this.d.changed(id);
    return { instanceId: id, attachment: { ...before, status: 'detached' } };
  }

  /** At start and every reconnect (domains: the hypervisor's list): see settleAttachments. */
  async settle(domains: Parameters<typeof settleAttachments>[1]): Promise<void> {
    const result = settleAttachments(this.d.snapshot().instances, domains);
    if (result.volumes.size > 0) {
      await this.d.persist((draft) => {
        for (const [id, list] of result.volumes) {
          const rec = draft.instances[id];
          if (!rec) continue;
          if (list.length > 0) rec.volumes = list;
          else delete rec.volumes;
        }
      });
      this.d.logger.info({ instances: [...result.volumes.keys()] }, 'settled volume attachments left half-way');
    }
    for (const { instanceId, volume } of result.reattach) {
      try {
        this.d.domains.note(await this.d.link.call('attachVolume', (drv) => drv.attachVolume(instanceId, volume)));
        this.d.logger.warn({ instanceId, volumeId: volume.volumeId }, 'an attached volume was missing from its domain: attached it again');
      } catch (e) {
        if (!this.d.link.healthy) throw e;
        this.d.logger.error({ err: e, instanceId, volumeId: volume.volumeId }, 'could not attach a volume its domain lost');
      }
    }
  }

  private write(instanceId: string, volumeId: string, next: NcVolumeAttachment | undefined): Promise<void> {
    return this.d.persist((draft) => {
      const rec = draft.instances[instanceId];
      if (rec) setAttachment(rec, volumeId, next);
    });
  }
}
