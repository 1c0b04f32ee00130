/**
 * The NC side of the live-migration handshake (shared/protocol/migrationProtocol.ts), faithfully
 * and in memory, for the CC's fake NCs: the source persists the plan and moves its items, the
 * destination holds Incoming records and counts them as used, every step is idempotent, refusals
 * come back as the CcErrors codes the real adapter would produce. The "hypervisor" (switchOver,
 * finishCleaning, failTransfer) is driven by the test, or automatically by FakeNodes.
 */
import { CcErrors } from '../../cc/errors.js';
import { add, fits, sub, ZERO, type Resources } from '../../shared/model/resources.js';
import type { NodeState } from '../../shared/protocol/common.js';
import type { Incoming, MigrationPlan, NcMigrateRequest, PlanItem } from '../../shared/protocol/migrationProtocol.js';
import type { NcInstance } from '../../shared/protocol/ncProtocol.js';
import type { NcMigrateResponse } from '../../cc/nodeClient.js';

const FINAL = ['completed', 'rolled-back', 'cancelled', 'failed'];

export interface MigratingNc {
  readonly host: string;
  nodeState: NodeState;
  healthy: boolean;
  capacity: Resources;
  instances: NcInstance[];
  plans: MigrationPlan[];
  incoming: Incoming[];
}

export interface MigrationWorld {
  nc(host: string): MigratingNc;
  now(): number;
  /** The source accepted commit: the hypervisor starts moving the VM. */
  started(source: string, migrationId: string, instanceId: string): void;
  /** NC → CC: ccNodeEvent. */
  notify(host: string, migrationId: string, instanceId: string): void;
}

/** Instances that are not terminated plus incoming records: what the NC admits against. */
export function usedBy(nc: MigratingNc): Resources {
  const live = nc.instances.filter((i) => i.state !== 'terminated' && i.userStopped !== true).reduce<Resources>((a, i) => add(a, i.vmType), ZERO);
  return nc.incoming.filter((r) => r.state !== 'none').reduce<Resources>((a, r) => add(a, r.vmType), live);
}

function findItem(nc: MigratingNc, migrationId: string, instanceId: string): { plan: MigrationPlan; item: PlanItem } | undefined {
  const plan = nc.plans.find((p) => p.migrationId === migrationId);
  const item = plan?.items.find((i) => i.instanceId === instanceId);
  return plan && item ? { plan, item } : undefined;
}

function setMigrationState(nc: MigratingNc, instanceId: string, state: NcInstance['migrationState']): void {
  const i = nc.instances.find((x) => x.instanceId === instanceId);
  if (i) i.migrationState = state;
}

/**
 * The generation a credential names. The fake NCs read it from the test issuer's text (RecordingIssuer
 * writes `gen N`); a real NC reads the certificate (credentialIdentity).
 */
export function fakeGeneration(req: NcMigrateRequest): number | undefined {
  const pem = 'credential' in req ? req.credential?.certPem : undefined;
  return pem === undefined ? undefined : Number(/gen (\d+)/.exec(pem)?.[1] ?? 0);
}

function notPrepared(host: string, migrationId: string, instanceId: string) {
  return CcErrors.make('MigrationNotPrepared', { host, migrationId, instanceId });
}

export function handleMigrate(world: MigrationWorld, host: string, req: NcMigrateRequest): NcMigrateResponse {
  const nc = world.nc(host);
  const now = world.now();
  switch (req.action) {
    case 'prepare': {
      if (req.role === 'source') {
        const held = nc.plans.find((p) => p.migrationId === req.plan.migrationId);
        if (held) return { migrationId: held.migrationId, plan: structuredClone(held) };
        for (const item of req.plan.items.filter((i) => i.state === 'queued')) {
          const inst = nc.instances.find((i) => i.instanceId === item.instanceId && i.state !== 'terminated');
          if (!inst) throw CcErrors.withMessage('InstanceNotFound', `instance ${item.instanceId} is not on node ${host}`, { host });
          if (inst.state !== 'running') throw CcErrors.withMessage('InstanceNotRunning', `instance ${item.instanceId} is ${inst.state}`, { host });
          const busy = nc.plans.find((p) => p.items.some((i) => i.instanceId === item.instanceId && !FINAL.includes(i.state)));
          if (busy) throw CcErrors.withMessage('MigrationInProgress', `instance ${item.instanceId} is in ${busy.migrationId}`, { host });
        }
        const plan = structuredClone(req.plan);
        nc.plans.push(plan);
        for (const item of plan.items) if (item.state === 'queued') setMigrationState(nc, item.instanceId, 'ready');
        return { migrationId: plan.migrationId, plan: structuredClone(plan) };
      }
      const spec = req.incoming;
      const held = nc.incoming.find((r) => r.migrationId === spec.migrationId && r.instanceId === spec.instanceId);
      const generation = fakeGeneration(req);
      // A re-join's later generation goes to the hypervisor; the record says which one it holds.
      if (held && generation !== undefined && generation > (held.credentialGeneration ?? 0)) held.credentialGeneration = generation;
      if (held) return { migrationId: spec.migrationId, incoming: { ...held } };
      if (nc.nodeState === 'disabled' && !req.allowDisabled) throw CcErrors.make('NodeDisabled', { host });
      if (!nc.healthy) throw CcErrors.make('NodeUnhealthy', { host, detail: 'hypervisor down' });
      if (!fits(spec.vmType, sub(nc.capacity, usedBy(nc)))) throw CcErrors.make('NodeFull', { host, detail: `cannot fit ${spec.vmType.name}` });
      const record: Incoming = { ...spec, state: 'ready', since: now };
      nc.incoming.push(record);
      return { migrationId: spec.migrationId, incoming: { ...record } };
    }
    case 'commit': {
      const found = findItem(nc, req.migrationId, req.instanceId);
      if (!found || found.item.destination !== req.destination) throw notPrepared(host, req.migrationId, req.instanceId);
      const { plan, item } = found;
      if (item.state === 'migrating' && item.awaitingCredential === true && fakeGeneration(req) === (item.credentialGeneration ?? 0)) {
        delete item.awaitingCredential;
        world.started(host, plan.migrationId, item.instanceId);
        return { migrationId: plan.migrationId, plan: structuredClone(plan) };
      }
      if (['migrating', 'cleaning', 'completed'].includes(item.state)) return { migrationId: plan.migrationId, plan: structuredClone(plan) };
      if (item.state !== 'queued') throw notPrepared(host, req.migrationId, req.instanceId);
      item.state = 'migrating';
      item.startedAt = now;
      setMigrationState(nc, item.instanceId, 'migrating');
      world.started(host, plan.migrationId, item.instanceId);
      return { migrationId: plan.migrationId, plan: structuredClone(plan) };
    }
    case 'rollback': {
      if (req.role === 'destination') {
        nc.incoming = nc.incoming.filter((r) => !(r.migrationId === req.migrationId && (req.instanceId === undefined || r.instanceId === req.instanceId)));
        return { migrationId: req.migrationId };
      }
      const plan = nc.plans.find((p) => p.migrationId === req.migrationId);
      if (!plan) return { migrationId: req.migrationId };
      if (req.cancel && req.instanceId === undefined) plan.cancelRequested = true;
      for (const item of plan.items) {
        if (req.instanceId !== undefined && item.instanceId !== req.instanceId) continue;
        if (FINAL.includes(item.state) || item.state === 'cleaning') continue;
        // A migrating item is aborted; the VM stays on the source.
        item.state = req.cancel ? 'cancelled' : 'rolled-back';
        item.error = req.reason;
        item.endedAt = now;
        setMigrationState(nc, item.instanceId, 'none');
      }
      return { migrationId: plan.migrationId, plan: structuredClone(plan) };
    }
    case 'replan': {
      const found = findItem(nc, req.migrationId, req.instanceId);
      if (!found || found.item.state !== 'queued') throw notPrepared(host, req.migrationId, req.instanceId);
      const { plan, item } = found;
      if (req.destination === '') {
        item.state = 'failed';
        item.destination = '';
        item.error = req.error ?? 'failed';
        item.endedAt = now;
        setMigrationState(nc, item.instanceId, 'none');
      } else {
        item.destination = req.destination;
        item.attempts += 1;
      }
      return { migrationId: plan.migrationId, plan: structuredClone(plan) };
    }
  }
}

function sourceItem(world: MigrationWorld, source: string, migrationId: string, instanceId: string): PlanItem | undefined {
  const found = findItem(world.nc(source), migrationId, instanceId);
  return found && found.item.state === 'migrating' ? found.item : undefined;
}

/**
 * The VM now runs on the destination: its record becomes its own instance there; the source item
 * goes to cleaning. Fails (rolled-back) when the destination holds no record: nothing to migrate to.
 */
export function switchOver(world: MigrationWorld, source: string, migrationId: string, instanceId: string): boolean {
  const item = sourceItem(world, source, migrationId, instanceId);
  if (!item) return false;
  const dest = world.nc(item.destination);
  const record = dest.incoming.find((r) => r.migrationId === migrationId && r.instanceId === instanceId);
  const src = world.nc(source);
  const vm = src.instances.find((i) => i.instanceId === instanceId);
  if (!record || !vm) {
    failTransfer(world, source, migrationId, instanceId, `destination ${item.destination} is not prepared`);
    return false;
  }
  dest.incoming = dest.incoming.filter((r) => r !== record);
  dest.instances.push({ ...vm, migrationState: 'none' });
  item.state = 'cleaning';
  setMigrationState(src, instanceId, 'cleaning');
  world.notify(item.destination, migrationId, instanceId);
  world.notify(source, migrationId, instanceId);
  return true;
}

/**
 * The source NC restarted after persisting `migrating` and its hypervisor never got the migration:
 * the item awaits a credential of the next generation (nc/migrationSource.ts applyAwaitCredential).
 */
export function loseCredential(world: MigrationWorld, source: string, migrationId: string, instanceId: string): void {
  const item = sourceItem(world, source, migrationId, instanceId);
  if (!item) return;
  item.credentialGeneration = (item.credentialGeneration ?? 0) + 1;
  item.awaitingCredential = true;
  world.notify(source, migrationId, instanceId);
}

/** The source has removed what was left: the item is completed. */
export function finishCleaning(world: MigrationWorld, source: string, migrationId: string, instanceId: string): void {
  const found = findItem(world.nc(source), migrationId, instanceId);
  if (!found || found.item.state !== 'cleaning') return;
  const src = world.nc(source);
  src.instances = src.instances.filter((i) => i.instanceId !== instanceId);
  found.item.state = 'completed';
  found.item.endedAt = world.now();
  found.item.stats = { elapsedMs: world.now() - (found.item.startedAt ?? world.now()), downtimeMs: 5, bytesTransferred: 1024, iterations: 2 };
  world.notify(source, migrationId, instanceId);
}

/** The source gave up (failure, stall or its own timeout): the VM stays; the destination's record is the CC's to clean. */
export function failTransfer(world: MigrationWorld, source: string, migrationId: string, instanceId: string, error: string): void {
  const found = findItem(world.nc(source), migrationId, instanceId);
  if (!found || found.item.state !== 'migrating') return;
  found.item.state = 'rolled-back';
  found.item.error = error;
  found.item.endedAt = world.now();
  setMigrationState(world.nc(source), instanceId, 'none');
  world.notify(source, migrationId, instanceId);
}
