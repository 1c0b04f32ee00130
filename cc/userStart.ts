/**
 * ccStartInstance (issue 18 part 5, StartInstances): a stopped instance starts on its own node when
 * that node takes instances (enabled, reachable, healthy, not quarantined, not fenced); otherwise it
 * is re-homed (rehome.ts: placed like host HA's restart elsewhere, started there, then forgotten on
 * its old node). A refusal of its own node for room (the stopped instance held none there) re-homes
 * it too.
 *
 * Disk: the root disk follows by shared storage, as for host HA's restart elsewhere (libvirt: the
 * cluster's shared `<diskDir>/<id>.img`, re-used by the new host; the simulated hypervisor keeps no
 * guest data, so its disk-activity counter begins again there). The old copy is forgotten only once
 * the new one runs: a failure half-way leaves the stopped copy, never no copy.
 *
 * Refused before anything changes: unknown (InstanceNotFound), not stopped and not running
 * (InstanceStateConflict: pending, shutting down), in a migration (MigrationInProgress), re-homed
 * with a volume between steps (InstanceStateConflict; attached ones come along, defined in the new
 * copy before it boots) or from a node that cannot forget it (NodeUnreachable, NodeFenced); no room
 * anywhere: InsufficientInstanceCapacity.
 */
import { isFerryError } from '../shared/errors/registry.js';
import type { CcRequest, CcResponse } from '../shared/protocol/ccProtocol.js';
import { CcErrors } from './errors.js';
import { rehome, type RehomeDeps } from './rehome.js';
import { applyStarted, findEntry, isSchedulable, locateInstance } from './view.js';

export type UserStartDeps = RehomeDeps;

type Answer = CcResponse<'ccStartInstance'>;

/** NC refusals of a start on its own node that a start elsewhere answers. */
const REHOME_ON = new Set(['NodeDisabled', 'NodeFull', 'NodeQuarantined']);

export async function userStart(d: UserStartDeps, req: CcRequest<'ccStartInstance'>): Promise<Answer> {
  const { keeper } = d;
  const { instanceId } = req;
  const fenced = keeper.fencedHosts();
  await keeper.refreshStale(d.freshMs, d.quickTimeoutMs);
  const view = keeper.get();
  const at = locateInstance(view, instanceId, fenced) ?? locateInstance(view, instanceId);
  if (!at || at.instance.state === 'terminated') throw CcErrors.make('InstanceNotFound', { instanceId, partition: view.partition });
  const { host, instance } = at;
  if (instance.state === 'running' && instance.userStopped !== true) {
    // Asked, not answered from the view: a stop whose answer was lost may have reached the NC, its
    // mark persisted and the domain not yet off; the NC clears it, or it would finish that stop at its
    // next start-up after this start was acknowledged (sim seed 203). An unreachable NC refuses.
    const i = await keeper.change(host, () => d.nodes.startInstance(host, instanceId, true));
    keeper.update(host, (v) => applyStarted(v, host, i));
    return { instanceId, host, previousState: 'running', currentState: i.state };
  }
  if (instance.migrationState !== 'none') {
    throw CcErrors.withMessage('MigrationInProgress', `instance ${instanceId} is migrating (${instance.migrationState}); start it once the migration has ended`, { host });
  }
  if (instance.state !== 'stopped' && instance.state !== 'running') {
    throw CcErrors.make('InstanceStateConflict', { instanceId, host, action: 'started', detail: `it is ${instance.state}` });
  }
  const node = findEntry(view, host)?.node;
  const avoid = new Set(req.avoidHosts ?? []);
  if (node && isSchedulable(node) && !fenced.has(host) && !avoid.has(host)) {
    try {
      const started = await keeper.change(host, async () => {
        const i = await d.nodes.startInstance(host, instanceId, true);
        keeper.update(host, (v) => applyStarted(v, host, i));
        return i;
      });
      void keeper.refreshHosts([host], d.quickTimeoutMs);
      return { instanceId, host, previousState: instance.state, currentState: started.state };
    } catch (e) {
      if (!isFerryError(e) || !REHOME_ON.has(e.code)) throw e;
      d.logger.info({ instanceId, host, code: e.code }, 'its own node refused the start: re-homing it');
    }
  }
  // A running domain is never moved this way (a stop that never reached it): only a stopped copy.
  if (instance.state !== 'stopped') throw CcErrors.make('InstanceStateConflict', { instanceId, host, action: 'started on another node', detail: `it is ${instance.state} on ${host}` });
  const placed = await rehome(d, host, instance, { cold: false, ...(req.avoidHosts ? { avoidHosts: req.avoidHosts } : {}) });
  return { instanceId, host: placed.host, previousState: 'stopped', currentState: placed.state, movedFrom: host };
}
