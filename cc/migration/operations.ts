/**
 * The CC's live-migration operations (the migration part of CC_OPS): plan and persist a migration, describe
 * and cancel plans, and take the NCs' change notices. The plans themselves live on the source NCs;
 * these handlers read them from the view and change them only through those NCs.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { isFerryError } from '../../shared/errors/registry.js';
import type { CcRequest, CcResponse } from '../../shared/protocol/ccProtocol.js';
import type { MigrationPlan } from '../../shared/protocol/migrationProtocol.js';
import { CcErrors } from '../errors.js';
import type { NodeClient } from '../nodeClient.js';
import type { Mailbox } from '../../shared/mailbox.js';
import { applyPlan, findEntry, matrixOf } from '../view.js';
import type { ViewKeeper } from '../viewKeeper.js';
import { describePlan, describePlans } from './describe.js';
import { migrationNodes } from './nodes.js';
import { newMigrationId, planMigration } from './planner.js';
import { coldMovePlan } from './coldMoves.js';
import type { DrainRehoming } from '../rehome.js';
import { isActivePlan, plansOf } from './plans.js';
import type { PlanDriver } from './planDriver.js';
import type { MigrationSettings } from './settings.js';

export interface MigrationOpsOptions {
  readonly keeper: ViewKeeper;
  readonly nodes: NodeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: MigrationSettings;
  /** The CC's placement queue, shared with ccRunInstances. */
  readonly placement: Mailbox;
  readonly planDriver: PlanDriver;
  /** Describe-style refreshes: nodes whose data is this old are asked again, within this timeout. */
  readonly freshMs: number;
  readonly quickTimeoutMs: number;
  /** ccDescribeMigrations waits for a source's refresh at most this long after it went out (viewKeeper.refreshForRead). */
  readonly readGraceMs: number;
  readonly ncTimeoutMs: number;
}

/** Answers after which the NC may or may not have carried out the request. */
function uncertain(e: unknown): boolean {
  return isFerryError(e) && (e.code === 'NodeProtocolError' || (e.code === 'NodeUnreachable' && e.fields.maybeDelivered !== false));
}

export class MigrationOps {
  constructor(private readonly o: MigrationOpsOptions) {}

  /**
   * One at a time with ccRunInstances, so two requests never both count the same free slot. A drain
   * with only cold moves to make answers `cold-only`: the caller re-homes (outside the placement
   * queue, which re-homing takes itself) and then records the moves (recordColdMoves).
   */
  migrate(req: CcRequest<'ccMigrateInstances'>): Promise<CcResponse<'ccMigrateInstances'> | { readonly coldOnly: string }> {
    return this.o.placement.run(async () => {
      const { keeper, settings, clock } = this.o;
      await keeper.refreshStale(this.o.freshMs, this.o.quickTimeoutMs);
      const outcome = planMigration(req, migrationNodes(keeper.get(), keeper.fencedHosts()), {
        partition: keeper.get().partition, now: clock.now(), newHex: settings.newHex, limits: settings.limits, timeouts: settings.timeouts,
      });
      if (!outcome.ok && outcome.coldOnly !== undefined) return { coldOnly: outcome.coldOnly };
      if (!outcome.ok) throw outcome.error;
      const plan = await this.persist(outcome.plan);
      this.o.logger.info({ migrationId: plan.migrationId, source: plan.source, items: plan.items.length, unplaced: outcome.unplaced.length }, 'migration planned');
      this.o.planDriver.poke();
      return { migrationId: plan.migrationId, plan, unplaced: [...outcome.unplaced], matrix: matrixOf(keeper.get(), req.vmTypes) };
    });
  }

  /** A drain's cold moves, made: kept on the source NC as a finished plan, answered as a drain's plan. */
  async recordColdMoves(req: CcRequest<'ccMigrateInstances'>, source: string, moved: DrainRehoming): Promise<CcResponse<'ccMigrateInstances'>> {
    const { keeper, settings, clock } = this.o;
    // Gone since the plan was looked at (another drain, a terminate): nothing was moved by this one.
    if (moved.tried.length === 0) throw CcErrors.make('NothingToMigrate', { host: source });
    const migrationId = newMigrationId(plansOf(migrationNodes(keeper.get(), keeper.fencedHosts())), settings.newHex);
    const plan = await this.persist(coldMovePlan(source, req, moved, migrationId, { now: clock.now(), limits: settings.limits, timeouts: settings.timeouts }));
    this.o.logger.info({ migrationId, source, rehomed: moved.rehomed.length, notRehomed: moved.notRehomed.length }, 'drain of stopped instances recorded (cold moves only)');
    return {
      migrationId, plan, unplaced: [], matrix: matrixOf(keeper.get(), req.vmTypes),
      rehomed: moved.rehomed, notRehomed: moved.notRehomed,
    };
  }

  /** A read: a source that does not answer in time is shown from its last report (sourceReachable false). */
  async describe(req: CcRequest<'ccDescribeMigrations'>): Promise<CcResponse<'ccDescribeMigrations'>> {
    const { keeper } = this.o;
    const stale = await keeper.refreshForRead(this.o.freshMs, this.o.readGraceMs, this.o.quickTimeoutMs);
    const all = describePlans(migrationNodes(keeper.get(), keeper.fencedHosts()), this.o.planDriver.currentMarks())
      .map((p) => (stale.has(p.source) ? { ...p, sourceReachable: false } : p));
    const migrations = req.migrationId === undefined ? all : all.filter((p) => p.migrationId === req.migrationId);
    if (req.migrationId !== undefined && migrations.length === 0) {
      throw CcErrors.make('MigrationNotFound', { migrationId: req.migrationId, partition: keeper.get().partition });
    }
    return { partition: keeper.get().partition, migrations };
  }

  async cancel(req: CcRequest<'ccCancelMigration'>): Promise<CcResponse<'ccCancelMigration'>> {
    const { keeper, nodes } = this.o;
    const { migrationId } = req;
    await keeper.refreshStale(this.o.freshMs, this.o.quickTimeoutMs);
    let plan = this.find(migrationId);
    // Not in the view: it may be on a node not polled lately; ask every NC before saying no.
    if (!plan) {
      await keeper.refreshStale(0, this.o.quickTimeoutMs);
      plan = this.find(migrationId);
    }
    if (!plan) throw CcErrors.make('MigrationNotFound', { migrationId, partition: keeper.get().partition });
    if (!isActivePlan(plan)) throw CcErrors.make('MigrationAlreadyFinished', { migrationId });
    const source = plan.source;
    if (!findEntry(keeper.get(), source)?.node.reachable) throw CcErrors.make('NodeUnreachable', { host: source, detail: 'its NC did not answer the last poll' });
    const held = await keeper.change(source, async () => {
      const res = await nodes.migrate(source, { action: 'rollback', role: 'source', migrationId, reason: 'cancelled by the administrator', cancel: true }, { timeoutMs: this.o.ncTimeoutMs });
      if (res.plan) keeper.update(source, (v) => applyPlan(v, source, res.plan as MigrationPlan));
      return res.plan ?? plan;
    });
    this.o.logger.info({ migrationId, source }, 'migration cancel requested');
    this.o.planDriver.poke();
    return { plan: describePlan(held, migrationNodes(keeper.get(), keeper.fencedHosts()), this.o.planDriver.currentMarks()) };
  }

  async nodeEvent(req: CcRequest<'ccNodeEvent'>): Promise<CcResponse<'ccNodeEvent'>> {
    const { keeper } = this.o;
    if (!findEntry(keeper.get(), req.host)) throw CcErrors.make('NodeNotFound', { host: req.host, partition: keeper.get().partition });
    this.o.planDriver.nodeEvent(req);
    return {};
  }

  private find(migrationId: string): MigrationPlan | undefined {
    return plansOf(migrationNodes(this.o.keeper.get(), this.o.keeper.fencedHosts())).find((p) => p.migrationId === migrationId);
  }

  /**
   * Has the source NC persist the plan; the view carries it from then on, and with it the plan's
   * reservations. After an uncertain answer the source is asked what it holds: the plan counts as
   * persisted only if it is there (a repeat would be harmless too: prepare is idempotent by id).
   */
  private async persist(plan: MigrationPlan): Promise<MigrationPlan> {
    const { keeper, nodes } = this.o;
    const source = plan.source;
    this.o.planDriver.signAhead(plan);
    try {
      return await keeper.change(source, async () => {
        const res = await nodes.migrate(source, { action: 'prepare', role: 'source', plan }, { timeoutMs: this.o.ncTimeoutMs });
        const held = res.plan ?? plan;
        keeper.update(source, (v) => applyPlan(v, source, held));
        return held;
      });
    } catch (e) {
      await keeper.refresh(source, this.o.quickTimeoutMs);
      const held = uncertain(e) ? this.find(plan.migrationId) : undefined;
      if (held) return held;
      throw e;
    }
  }
}
