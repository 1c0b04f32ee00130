/**
 * The destination half of the migration item executor: executes migrationDestination.ts's decisions in the
 * node's mailbox. Persist the intent, act on the hypervisor, persist the outcome, then reply.
 */
import { performance } from 'node:perf_hooks';
import { isFerryError } from '../shared/errors/registry.js';
import { credentialIdentity } from '../shared/pki/migrationPeer.js';
import type { MigrationCredential } from '../shared/protocol/migrationProtocol.js';
import { NcErrors } from './errors.js';
import { observedState } from './instanceView.js';
import {
  applyArrival, applyIncoming, classifyIncomingDomain, decideIncomingPrepare, incomingSpec, incomingToRollBack, incomingView,
  type DestinationPrepareRequest, type DestinationRollbackRequest,
} from './migrationDestination.js';
import { tell, type MigrateAnswer, type MigrationContext } from './migrationContext.js';
import { hypervisorMigrationId } from './migrationSource.js';
import type { NcSnapshot, StoredIncoming } from './ncStore.js';

/** A credential with the generation its certificate names (0 when it names none). */
interface HeldCredential {
  readonly credential: MigrationCredential;
  readonly generation: number;
}

export class IncomingItemExecutor {
  /**
   * Each incoming item's credential of the latest generation seen, by instance id: memory only (never
   * in the store or a log). After a restart there is none until the CC prepares again; until then
   * nothing is re-prepared over TLS.
   */
  private readonly credentials = new Map<string, HeldCredential>();

  /** `onActive`: something now needs the executor's tick (an incoming record exists). */
  constructor(private readonly ctx: MigrationContext, private readonly onActive: () => void) {}

  async prepare(req: DestinationPrepareRequest): Promise<MigrateAnswer> {
    const id = req.incoming.instanceId;
    if (!req.credential && this.ctx.requireCredentials) {
      throw NcErrors.make('MigrationCredentialMissing', { host: this.ctx.host, step: 'prepare', instanceId: id, migrationId: req.migrationId });
    }
    const generation = req.credential ? credentialIdentity(req.credential)?.generation ?? 0 : undefined;
    const d = decideIncomingPrepare({
      host: this.ctx.host, snapshot: this.snap, request: req, capacity: this.ctx.link.capacity,
      healthy: this.ctx.link.healthy, observation: this.ctx.domains.current, now: this.ctx.clock.now(), generation,
    });
    if (d.kind === 'refuse') throw NcErrors.make(d.code, d.fields);
    if (d.kind === 'arrived') return { migrationId: req.migrationId };
    // A late repeat of an earlier generation never replaces a later one (its source is superseded).
    const held = this.credentials.get(id);
    if (req.credential && generation !== undefined && (!held || generation >= held.generation)) this.credentials.set(id, { credential: req.credential, generation });
    if (d.kind === 'answer') return { migrationId: req.migrationId, incoming: incomingView(d.incoming) };
    const { incoming } = d;
    const t0 = performance.now();
    if (d.fresh) await this.ctx.persist((draft) => { draft.incoming[incoming.instanceId] = incoming; }); // the prepare row's record (decideIncomingPrepare)
    this.ctx.logger.debug({ instanceId: id, ms: Math.round(performance.now() - t0) }, 'incoming record persisted');
    const ready = await this.prepareHypervisor(incoming, d.rejoin !== true);
    return { migrationId: req.migrationId, incoming: incomingView(ready) };
  }

  /** Recovery: prepare a record again (idempotent); a refusal of one never acknowledged drops it, and so does a restart that lost its credential. */
  async prepareAgain(instanceId: string): Promise<void> {
    const rec = this.snap.incoming[instanceId];
    if (!rec) return;
    if (rec.state === 'preparing' && !rec.rollingBack && this.ctx.requireCredentials && !this.credentials.has(instanceId)) {
      // Never acknowledged ready, and its credential died with the last process: undo it, so the CC,
      // seeing no record, prepares again with a new one. The CC waits on a record that says
      // preparing, so keeping it would stall the item until prepareMs and roll it back.
      await this.finishRollback(instanceId, 'the NC restarted before it was ready: the CC prepares it again with a new credential');
      return;
    }
    try {
      await this.prepareHypervisor(rec, rec.state === 'preparing');
    } catch (e) {
      if (isFerryError(e) && e.code === 'HypervisorUnavailable') throw e;
      this.ctx.logger.warn({ err: e, instanceId, migrationId: rec.migrationId }, 'could not prepare an incoming migration again; the CC rolls it back');
    }
  }

  async rollback(req: DestinationRollbackRequest): Promise<MigrateAnswer> {
    for (const id of incomingToRollBack(this.snap, req)) {
      await this.ctx.persist((d) => applyIncoming(d, id, 'rollback', {}));
      await this.finishRollback(id, req.reason);
    }
    return { migrationId: req.migrationId };
  }

  async finishRollback(id: string, reason: string): Promise<void> {
    const rec = this.snap.incoming[id];
    if (!rec) return;
    await this.ctx.link.call('abortIncoming', (d) => d.abortIncoming(id, hypervisorMigrationId(rec.migrationId, id)));
    const domain = await this.ctx.link.call('info', (d) => d.info(id));
    if (domain && classifyIncomingDomain(domain.state) === 'arrived') {
      // Too late to undo: the VM runs here and nowhere else. It becomes this node's instance.
      this.ctx.logger.warn({ migrationId: rec.migrationId, instanceId: id }, 'rollback came after the instance arrived; keeping it');
      this.ctx.domains.note(domain);
      await this.finalize(id);
      return;
    }
    // The domain is gone from here: this host's access to its volumes goes too; the source keeps them.
    await this.ctx.volumes.disconnect(id, incomingSpec(rec).volumes ?? []);
    await this.ctx.persist((d) => applyIncoming(d, id, 'rolledBack', {}));
    this.credentials.delete(id);
    this.ctx.domains.forget(id);
    this.ctx.logger.info({ migrationId: rec.migrationId, instanceId: id, reason }, 'incoming migration rolled back');
    tell(this.ctx, 'migration', rec.migrationId, id);
  }

  /** The incoming VM runs here: the Incoming record becomes an instance record in one update. */
  async finalize(id: string): Promise<void> {
    const suspended = observedState(this.ctx.domains.current, id) === 'suspended';
    const rec = await this.ctx.persist((d) => applyArrival(d, id, this.ctx.clock.now(), suspended));
    this.credentials.delete(id);
    if (!rec) return;
    this.ctx.logger.info({ migrationId: rec.arrivedBy, instanceId: id }, 'incoming instance arrived and runs here');
    tell(this.ctx, 'migration', rec.arrivedBy, id);
    tell(this.ctx, 'instance', rec.arrivedBy, id);
  }

  /** A hint (event) that the VM arrived: look, and finalize if it did. */
  async checkArrival(id: string): Promise<void> {
    if (!this.snap.incoming[id] || !this.ctx.link.healthy) return;
    const domain = await this.ctx.link.call('info', (d) => d.info(id));
    if (!domain) return;
    this.ctx.domains.note(domain);
    if (classifyIncomingDomain(domain.state) === 'arrived') await this.finalize(id);
  }

  /**
   * Has the hypervisor hold the incoming domain, then records ready. A coded refusal means nothing
   * was prepared: with `dropOnRefusal` (never acknowledged) the record goes. No answer means it may
   * have been: the record stays preparing for a retry or the next recovery.
   */
  private async prepareHypervisor(rec: StoredIncoming, dropOnRefusal: boolean): Promise<StoredIncoming> {
    const id = rec.instanceId;
    const held = this.credentials.get(id);
    const credential = held?.credential;
    // Read before the update below: a ready record handed a later generation is a re-join's re-prepare.
    const rejoin = held !== undefined && rec.state === 'ready' && held.generation > (rec.credentialGeneration ?? 0);
    if (!credential && this.ctx.requireCredentials) {
      throw NcErrors.make('MigrationCredentialMissing', { host: this.ctx.host, step: 'prepare', instanceId: id, migrationId: rec.migrationId });
    }
    const spec = incomingSpec(rec);
    try {
      // Its volumes are reachable here before the source may commit (issue 18): no data moves.
      await this.ctx.volumes.connect(id, spec.volumes ?? []);
      const t0 = performance.now();
      await this.ctx.link.call('prepareIncoming', (d) => d.prepareIncoming(spec, hypervisorMigrationId(rec.migrationId, id), credential));
      this.ctx.logger.debug({ instanceId: id, ms: Math.round(performance.now() - t0) }, 'incoming prepared on the hypervisor');
    } catch (e) {
      if (isFerryError(e) && e.code !== 'HypervisorUnavailable') {
        if (dropOnRefusal) await this.ctx.volumes.disconnect(id, spec.volumes ?? []);
        await this.ctx.persist((d) => applyIncoming(d, id, 'prepareRefused', { acknowledged: !dropOnRefusal }));
      }
      throw e;
    }
    const ready = await this.ctx.persist((d) => {
      const r = applyIncoming(d, id, 'prepared', { now: this.ctx.clock.now(), generation: held?.generation });
      // A programming-invariant assert (uncoded on purpose): unreachable while only the mailbox writes the store.
      if (!r) throw new Error(`incoming record ${id} vanished inside the mailbox`);
      return { ...r };
    });
    this.ctx.logger.info(
      { migrationId: rec.migrationId, instanceId: id, source: rec.source, ...(held ? { credentialGeneration: held.generation } : {}) },
      rejoin ? 'incoming migration ready for its re-joining source (credential re-issued)' : 'incoming migration ready',
    );
    tell(this.ctx, 'migration', rec.migrationId, id);
    this.onActive();
    return ready;
  }

  private get snap(): NcSnapshot {
    return this.ctx.snapshot();
  }
}
