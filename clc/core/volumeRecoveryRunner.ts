/**
 * Resolves the volumes a killed CLC left in flight (volumeRecovery.ts has the rules). Runs once as
 * the CLC starts, before it serves: `creating` and `deleting` are finished at once against the
 * backend (only a CLC touches it, and the last one is dead); the attachments left `attaching` or
 * `detaching` are looked at `settleMs` later, once any CC call the dead CLC had made has ended
 * (its node has answered or the call has timed out), and again every `settleMs` while one waits.
 * Only the volumes in flight at start are looked at, and only while their step is still the one
 * they were left in: a request this CLC serves meanwhile (DetachVolume Force=true) wins.
 */
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../shared/clock.js';
import type { Store } from '../../shared/store/store.js';
import type { Clusters } from '../clusters/clusters.js';
import { askPartitions } from '../clusters/fanOut.js';
import type { ClcState } from '../state/clcStore.js';
import type { VolumeBackend } from './volumeBackend.js';
import { stepAttachment, stepVolume } from './volumeMachine.js';
import { inFlight, recoveryStep, type NodeEvidence } from './volumeRecovery.js';
import type { VolumeRecord } from './volumeRecords.js';
import type { CcInstance } from '../../shared/protocol/ccProtocol.js';

export interface VolumeRecoveryDeps {
  readonly store: Store<ClcState>;
  readonly clusters: Clusters;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Absent: a CLC without --storage-dir, which cannot finish a create or a delete (it says so). */
  readonly backend?: VolumeBackend | undefined;
  /** How long after start the attachments are looked at, and between passes while one waits. */
  readonly settleMs: number;
}

type Report = { readonly instances: readonly CcInstance[]; readonly complete?: boolean | undefined };

/** What the partition's answer shows of `instanceId` and `volumeId`. */
export function nodeEvidence(report: Report | undefined, instanceId: string, volumeId: string): NodeEvidence {
  if (!report || report.complete === false) return { kind: 'unknown' };
  const copies = report.instances.filter((i) => i.instanceId === instanceId && i.state !== 'terminated' && i.state !== 'shutting-down');
  if (copies.length === 0) return { kind: 'gone' };
  // Two live copies: it is moving between nodes; the migration settles it first.
  if (copies.length > 1) return { kind: 'unknown' };
  const copy = copies[0] as CcInstance;
  return { kind: 'held', host: copy.host, status: copy.volumes?.find((a) => a.volumeId === volumeId)?.status };
}

/** The step a volume was left in: its state, and its attachment's status. */
const stepOf = (v: Pick<VolumeRecord, 'state' | 'attachment'>): string => `${v.state}/${v.attachment?.status ?? ''}`;

export class VolumeRecovery {
  /** Volume id → the step it was left in. */
  private readonly left = new Map<string, string>();
  private timer: TimerHandle | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly d: VolumeRecoveryDeps) {}

  /** Notes what was left in flight, finishes the creates and deletes, and schedules the attachment pass. */
  async start(): Promise<void> {
    for (const v of Object.values(this.d.store.read().volumes)) if (inFlight(v)) this.left.set(v.volumeId, stepOf(v));
    if (this.left.size === 0) return;
    this.d.logger.warn({ volumes: [...this.left].map(([id, step]) => `${id} ${step}`) }, 'volumes left in flight by the last CLC process: resolving them from the storage and the nodes');
    for (const id of [...this.left.keys()]) {
      const v = this.current(id);
      if (v?.state === 'creating') await this.finishCreate(v);
      else if (v?.state === 'deleting') await this.finishDelete(v);
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** Resolves once the pass under way, if any, has ended (for tests on the injected clock). */
  idle(): Promise<void> {
    return this.running;
  }

  /** The volumes still waiting to be resolved (for tests and the log). */
  waiting(): string[] {
    return [...this.left.keys()];
  }

  /** One pass over the attachments left in flight; resolves what the nodes show. */
  async pass(): Promise<void> {
    const byPartition = new Map<string, VolumeRecord[]>();
    for (const id of [...this.left.keys()]) {
      const v = this.current(id);
      if (!v) continue;
      byPartition.set(v.partition, [...(byPartition.get(v.partition) ?? []), v]);
    }
    if (byPartition.size === 0) return;
    const fan = await askPartitions(this.d.clusters, [...byPartition.keys()], 'ccDescribeInstances', {}, this.d.logger);
    for (const [partition, volumes] of byPartition) {
      const report = fan.answers.get(partition);
      for (const v of volumes) {
        const a = v.attachment;
        const step = recoveryStep(v, a ? nodeEvidence(report, a.instanceId, v.volumeId) : { kind: 'unknown' });
        if (step.kind === 'wait') {
          this.d.logger.info({ volumeId: v.volumeId, step: stepOf(v), why: step.why }, 'volume left in flight: looked again later');
          continue;
        }
        if (step.kind !== 'settle') continue;
        const before = stepOf(v);
        const event = step.event;
        // Still the step it was left in (checked in the write): a request this CLC serves may have moved it on.
        await this.d.store.update((dr) => {
          const r = dr.volumes[v.volumeId];
          if (!r?.attachment || stepOf(r) !== before) return;
          r.attachment.status = stepAttachment(r.volumeId, r.attachment.status, event);
          if (r.attachment.status === 'detached') {
            delete r.attachment;
            r.state = stepVolume(r.volumeId, r.state, 'released');
          }
        });
        this.left.delete(v.volumeId);
        this.d.logger.warn({ volumeId: v.volumeId, instanceId: a?.instanceId, was: before, event, why: step.why }, 'volume attachment left in flight resolved');
      }
    }
  }

  /** The record, while it is still in the step it was left in; otherwise it is no longer this one's to resolve. */
  private current(id: string): VolumeRecord | undefined {
    const v = this.d.store.read().volumes[id];
    if (!v || stepOf(v) !== this.left.get(id)) {
      this.left.delete(id);
      return undefined;
    }
    return v;
  }

  private schedule(): void {
    if (this.stopped || this.left.size === 0) return;
    this.timer = this.d.clock.setTimer(this.d.settleMs, () => {
      this.running = this.running.then(() => this.pass()).catch((e: unknown) => {
        this.d.logger.warn({ err: e }, 'volume recovery pass failed; it runs again');
      }).finally(() => this.schedule());
    });
  }

  /** The backend's create is idempotent: made again (or found made), or the volume goes to error. */
  private async finishCreate(v: VolumeRecord): Promise<void> {
    const { backend } = this.d;
    if (!backend) {
      this.d.logger.error({ volumeId: v.volumeId }, 'a volume was left creating, and this CLC has no --storage-dir to finish it: it stays creating');
      this.left.delete(v.volumeId);
      return;
    }
    let path: string | undefined;
    let failure: string | undefined;
    try {
      path = await backend.create(v.volumeId, v.size);
    } catch (e) {
      failure = `the CLC stopped while creating it, and its storage could not be made after: ${(e as Error).message}`;
    }
    await this.d.store.update((d) => {
      const r = d.volumes[v.volumeId];
      if (r?.state !== 'creating') return;
      r.state = stepVolume(r.volumeId, r.state, path !== undefined ? 'created' : 'createFailed');
      if (path !== undefined) r.path = path;
      if (failure !== undefined) r.error = failure;
    });
    this.left.delete(v.volumeId);
    this.d.logger.warn({ volumeId: v.volumeId, path, failure }, path !== undefined ? 'volume left creating: its storage is made, it is available' : 'volume left creating: its storage could not be made, it is in error');
  }

  /** The backend's remove is idempotent: removed (the record goes), or the volume goes to error. */
  private async finishDelete(v: VolumeRecord): Promise<void> {
    const { backend } = this.d;
    if (!backend) {
      this.d.logger.error({ volumeId: v.volumeId }, 'a volume was left deleting, and this CLC has no --storage-dir to finish it: it stays deleting (DeleteVolume again once it has one)');
      this.left.delete(v.volumeId);
      return;
    }
    let failure: string | undefined;
    try {
      await backend.remove(v.volumeId);
    } catch (e) {
      failure = `the CLC stopped while deleting it, and its storage could not be removed after: ${(e as Error).message}`;
    }
    await this.d.store.update((d) => {
      const r = d.volumes[v.volumeId];
      if (r?.state !== 'deleting') return;
      if (failure !== undefined) {
        r.state = stepVolume(r.volumeId, r.state, 'deleteFailed');
        r.error = failure;
      } else {
        stepVolume(r.volumeId, r.state, 'deleted');
        delete d.volumes[v.volumeId];
      }
    });
    this.left.delete(v.volumeId);
    this.d.logger.warn({ volumeId: v.volumeId, failure }, failure === undefined ? 'volume left deleting: its storage is removed, so is it' : 'volume left deleting: its storage could not be removed, it is in error');
  }
}
