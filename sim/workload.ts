/**
 * Runs workload events as an admin would, through the CLC's real actions (sim/simClc.ts: the change
 * gate, clc.json, the CC adapter over the simulated network), without waiting; each answer — if the
 * CLC lives to give one — goes into the ledger. Host HA's operator commands are here too: its setup
 * (ConfigureHAForCluster / ConfigureHAForHost / EnableHAForCluster), switches, FenceHost and a
 * careful operator's ConfirmHostFenced (only for a host that truly is off).
 */
import { isFerryError } from '../shared/errors/registry.js';
import type { Ledger } from './ledger.js';
import { M1_LARGE, M1_SMALL, clusterOf } from './settings.js';
import type { SimCloud } from './simCloud.js';
import type { SimClc } from './simClc.js';
import type { WorkloadEvent } from './schedule.js';

type Pairs = [string, string][];
type Xml = Readonly<Record<string, unknown>>;

/** Numbered list parameters (`InstanceId.1`, `InstanceId.2`, …) as the query API spells them. */
function list(name: string, values: readonly string[]): Pairs {
  return values.map((v, i) => [`${name}.${i + 1}`, v]);
}

/**
 * Short HA timings so episodes (suspect → checks → recover or fence) fit in the chaos phase. The
 * activity checks are spaced wider than the hosts' writes (settings.activityWriteMs), as CloudStack
 * asks: closer, a live host would read as inactive and be power-cycled.
 */
export const SIM_HA_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  HealthCheckTimeoutMs: '1500', HealthCheckIntervalMs: '2000', ActivityCheckTimeoutMs: '2500', ActivityCheckInitialDelayMs: '2500',
  ActivityCheckIntervalMs: '5000', ActivityCheckMaxAttempts: '3', ActivityCheckFailureRatio: '0.6', DegradedMaxPeriodMs: '10000',
  RecoverTimeoutMs: '8000', RecoverWaitPeriodMs: '10000', FenceTimeoutMs: '8000',
});

export class Workload {
  /** The CLC replica that answered last: where the next request goes first. */
  private lastAnswered: string | undefined;

  constructor(private readonly cloud: SimCloud, private readonly ledger: Ledger, private readonly trace: (line: string) => void) {}

  run(e: WorkloadEvent): void {
    const l = this.ledger;
    switch (e.kind) {
      case 'run':
        this.call('RunInstances', [
          ['ImageId', 'emi-00000001'], ['InstanceType', (e.large ? M1_LARGE : M1_SMALL).name], ['MinCount', String(Math.min(e.minCount, e.count))], ['MaxCount', String(e.count)],
        ], (r) => l.acknowledgeRun((r.instancesSet as Xml[]).map((i) => i.instanceId as string)));
        return;
      case 'terminate': {
        const live = l.live();
        const id = live[e.pick % Math.max(1, live.length)];
        if (id === undefined) return;
        // Asked is enough to count as maybe gone (the answer may be lost); refused before anything was done is not.
        const refused = (code: string): void => {
          if (code === 'MigrationInProgress') l.terminating.delete(id);
        };
        if (this.call('TerminateInstances', list('InstanceId', [id]), () => l.terminated.add(id), refused)) l.terminating.add(id);
        return;
      }
      case 'modify': {
        const acknowledge = l.modifySent(e.host, e.state);
        this.call(e.state === 'enabled' ? 'EnableService' : 'DisableService', [['Type', 'node'], ['Host', e.host], ['Partition', this.partitionOf(e.host)]], acknowledge);
        return;
      }
      case 'drain':
        this.call('MigrateInstances', [
          ['SourceHost', e.host], ...list('DestinationHost', e.destinations), ['AllowHosts', String(e.allowHosts)], ['Partial', String(e.partial)], ['ReserveDestinations', String(e.reserve)],
        ], (r) => l.migrations.push(r.migrationId as string));
        return;
      case 'migrateOne': {
        const live = this.candidates(e.destinations);
        const id = live[e.pick % Math.max(1, live.length)];
        if (id === undefined) return;
        this.call('MigrateInstances', [['InstanceId', id], ...list('DestinationHost', e.destinations), ['AllowHosts', String(e.allowHosts)]], (r) => l.migrations.push(r.migrationId as string));
        return;
      }
      case 'cancel': {
        const id = l.migrations[e.pick % Math.max(1, l.migrations.length)];
        if (id !== undefined) this.call('CancelMigration', [['MigrationId', id]], () => undefined);
        return;
      }
      case 'haSetup':
        this.haSetup(e.maxUnhealthy, e.recoverFailureThreshold);
        return;
      case 'haSwitch':
        this.call(e.enabled ? 'EnableHAForHost' : 'DisableHAForHost', [['Host', e.host]], () => undefined);
        return;
      case 'fenceHost':
        this.call('FenceHost', [['Host', e.host]], () => undefined);
        return;
      case 'quarantine': {
        // Quarantine disables the node in the same write: the ledger follows it as a DisableService.
        const acknowledge = e.quarantined ? l.modifySent(e.host, 'disabled') : () => undefined;
        this.call(e.quarantined ? 'QuarantineNode' : 'UnquarantineNode', [['Host', e.host], ['Partition', this.partitionOf(e.host)], ...(e.quarantined ? [['Reason', 'sim'] as [string, string]] : [])], acknowledge);
        return;
      }
      case 'createVolume':
        this.call('CreateVolume', [['Size', String(e.sizeGiB)], ['AvailabilityZone', e.partition]], (r) => l.volumes.push({ volumeId: r.volumeId as string, partition: e.partition }));
        return;
      case 'attachVolume': {
        const v = this.pickVolume(e.volume, (a) => a === undefined);
        if (v === undefined) return;
        const live = this.runningIn(v.partition);
        const id = live[e.pick % Math.max(1, live.length)];
        if (id !== undefined) this.call('AttachVolume', [['VolumeId', v.volumeId], ['InstanceId', id], ['Device', e.device]], () => undefined);
        return;
      }
      case 'detachVolume': {
        // The admin detaches what DescribeVolumes shows attached; with nothing attached there is nothing to ask.
        const v = this.pickVolume(e.volume, (a) => a !== undefined, false);
        if (v !== undefined) this.call('DetachVolume', [['VolumeId', v.volumeId], ...(e.force ? [['Force', 'true'] as [string, string]] : [])], () => undefined);
        return;
      }
      case 'deleteVolume': {
        const v = this.pickVolume(e.volume, () => true);
        if (v !== undefined) this.call('DeleteVolume', [['VolumeId', v.volumeId]], () => undefined);
        return;
      }
      case 'stopInstance': {
        const live = l.live().filter((i) => !l.isStopped(i));
        const id = live[e.pick % Math.max(1, live.length)];
        if (id !== undefined) this.power('StopInstances', id, e.force ? [['Force', 'true']] : []);
        return;
      }
      case 'startInstance': {
        const stopped = l.live().filter((i) => l.power.get(i) === 'stopped' || l.power.get(i) === 'unsure');
        const id = stopped[e.pick % Math.max(1, stopped.length)];
        if (id === undefined) return;
        const host = e.disableFirst ? this.hostOf(id) : undefined;
        if (host === undefined) {
          this.power('StartInstances', id, []);
          return;
        }
        // Its node leaves service first: the start must re-home it onto an enabled node (cc/userStart.ts).
        const acknowledge = l.modifySent(host, 'disabled');
        const start = (): void => this.power('StartInstances', id, []);
        if (!this.call('DisableService', [['Type', 'node'], ['Host', host], ['Partition', this.partitionOf(host)]], () => { acknowledge(); start(); }, start)) start();
        return;
      }
      case 'rebootInstance': {
        const live = l.live().filter((i) => !l.isStopped(i));
        const id = live[e.pick % Math.max(1, live.length)];
        if (id !== undefined) this.call('RebootInstances', list('InstanceId', [id]), () => undefined);
        return;
      }
      case 'confirmFenced': {
        // A careful operator looks at the machine first: only a host that truly is off is confirmed.
        const off = !this.cloud.node(e.host).hv?.isAlive;
        const fencing = this.cloud.clc?.store.read().ha.hosts[e.host]?.state === 'FENCING';
        if (fencing && (off || e.careless)) {
          if (!off) l.carelessConfirms.add(e.host);
          this.call('ConfirmHostFenced', [['Host', e.host]], () => undefined);
        }
        return;
      }
    }
  }

  /**
   * After the faults (heal phase) the admin returns fenced hosts to service, as the runbook says: a
   * fence that needs an operator is retried (FenceHost) or, for a host that is off, confirmed; a
   * FENCED host is powered on by hand and then enabled (EnableService clears its obsolete copies).
   */
  tendFencedHosts(): void {
    for (const r of Object.values(this.cloud.clc?.store.read().ha.hosts ?? {})) {
      const on = this.cloud.node(r.host).hv?.isAlive === true;
      if (r.state === 'FENCING' && r.needsOperator) {
        this.call(on ? 'FenceHost' : 'ConfirmHostFenced', [['Host', r.host]], () => undefined);
      } else if (r.state === 'FENCED' && !on) {
        this.trace(`admin powers ${r.host} on by hand`);
        void this.cloud.powerOn(r.host);
      } else if (r.state === 'FENCED') {
        this.call('EnableService', [['Type', 'node'], ['Host', r.host], ['Partition', this.partitionOf(r.host)]], () => undefined);
      }
    }
  }

  /** StopInstances or StartInstances of one instance, followed in the ledger (a refusal before anything was done changes nothing). */
  private power(action: 'StopInstances' | 'StartInstances', id: string, extra: Pairs): void {
    const p = this.ledger.powerSent(id, action === 'StopInstances' ? 'stopped' : 'running');
    if (!this.call(action, [...list('InstanceId', [id]), ...extra], p.acknowledged, (_code, clientFault) => { if (clientFault) p.refused(); })) p.refused();
  }

  /**
   * A created volume, as the admin would pick one after a DescribeVolumes: among those still there
   * whose attachment (none, or one) `wanted` accepts; when none is, among all created (a refusal), or none unless `orAny`.
   */
  private pickVolume(pick: number, wanted: (attachment: unknown) => boolean, orAny = true): { readonly volumeId: string; readonly partition: string } | undefined {
    const known = this.cloud.clc?.store.read().volumes ?? {};
    const fitting = this.ledger.volumes.filter((v) => known[v.volumeId] !== undefined && wanted(known[v.volumeId]?.attachment));
    const from = fitting.length > 0 || !orAny ? fitting : this.ledger.volumes;
    return from[pick % Math.max(1, from.length)];
  }

  /** The host whose hypervisor holds the instance (running or shut off), as the admin would look it up. */
  private hostOf(id: string): string | undefined {
    for (const n of this.cloud.nodes.values()) if (n.slot.current?.list().some((d) => d.id === id)) return n.host;
    return undefined;
  }

  /** The live instances with a domain in `partition` (a volume attaches only there), or every live one when none is. */
  private runningIn(partition: string): string[] {
    const live = this.ledger.live();
    const hosts = this.cloud.settings.clusters.find((c) => c.partition === partition)?.hosts ?? [];
    const there = new Set(hosts.flatMap((h) => this.cloud.node(h).slot.current?.list().map((d) => d.id) ?? []));
    const inside = live.filter((id) => there.has(id));
    return inside.length > 0 ? inside : live;
  }

  private partitionOf(host: string): string {
    return clusterOf(this.cloud.settings, host).partition;
  }

  /**
   * The live instances a migrateOne picks from: with several partitions, those running in the
   * partition of its destinations (a destination elsewhere is refused, which says little).
   */
  private candidates(destinations: readonly string[]): string[] {
    const live = this.ledger.live();
    const first = destinations[0];
    if (this.cloud.settings.clusters.length === 1 || first === undefined) return live;
    const hosts = clusterOf(this.cloud.settings, first).hosts;
    const there = new Set(hosts.flatMap((h) => this.cloud.node(h).slot.current?.list().map((d) => d.id) ?? []));
    const inside = live.filter((id) => there.has(id));
    return inside.length > 0 ? inside : live;
  }

  /** The admin switches HA on, partition by partition, in order; a step that fails (the CLC down, a lost answer) is tried again a little later. */
  private haSetup(maxUnhealthy: string, threshold: number): void {
    const steps: [string, Pairs][] = this.cloud.settings.clusters.flatMap(({ partition, hosts }): [string, Pairs][] => [
      ['ConfigureHAForCluster', [['Partition', partition], ['MaxUnhealthy', maxUnhealthy], ['RecoverFailureThreshold', String(threshold)], ...Object.entries(SIM_HA_SETTINGS)]],
      ...hosts.map((h): [string, Pairs] => ['ConfigureHAForHost', [
        ['Host', h], ['Partition', partition], ['Agent', 'fence_ipmilan'], ['Address', h], ['Username', 'admin'], ['Password', 'sim'],
      ]]),
      ['EnableHAForCluster', [['Partition', partition]]],
    ]);
    const next = (i: number): void => {
      const step = steps[i];
      if (!step) return;
      const retry = (): void => { this.cloud.clock.setTimer(500, () => next(i)); };
      if (!this.call(step[0], step[1], () => next(i + 1), retry)) retry();
    };
    next(0);
  }

  /**
   * Sends the request unless the CLC is down or still starting (connection refused); true when it was sent.
   * With CLC replicas it goes to the replica that answered last (or the first one up), and a NotLeader
   * answer is followed once, to the leader it names or another replica, as the CLI does (clc/cli/queryClient.ts).
   */
  private call(action: string, pairs: Pairs, onAnswer: (res: Xml) => void, onError?: (code: string, clientFault: boolean) => void): boolean {
    const what = `${action} ${pairs.map(([, v]) => v).join(' ')}`;
    const first = this.replica(undefined);
    if (!first) {
      this.trace(`admin ${action} refused: the clc is not up`);
      return false;
    }
    const send = (clc: SimClc, followed: boolean): void => {
      void clc.act(action, pairs).then(
        (res) => {
          this.lastAnswered = clc.name;
          this.trace(`admin ${what} ok${followed ? ` (at ${clc.name})` : ''}`);
          onAnswer(res as Xml);
        },
        (err: unknown) => {
          if (isFerryError(err) && err.code === 'NotLeader') {
            this.cloud.notLeaderAnswers++;
            const next = followed ? undefined : this.replica(clc.name, typeof err.fields.leaderUrl === 'string' ? err.fields.leaderUrl : undefined);
            if (next !== undefined) {
              this.trace(`admin ${action}: NotLeader from ${clc.name}, sent again to ${next.name}`);
              send(next, true);
              return;
            }
          }
          this.trace(`admin ${what} failed: ${isFerryError(err) ? err.code : String(err)}`);
          // A CLC bug: an uncoded error, or an InternalError of its own making. A CC refusal it translates to
          // InternalError (delivered: yes) is left out: a duplicated ccRunInstances answered InstanceExists is one (docs/SIMULATION.md).
          if (!isFerryError(err) || (err.code === 'InternalError' && err.fields.delivered !== 'yes')) {
            this.ledger.uncoded.push(`${action} failed with ${isFerryError(err) ? err.message : String(err)}`);
          }
          onError?.(isFerryError(err) ? err.code : 'uncoded', isFerryError(err) && err.clientFault);
        },
      );
    };
    send(first, false);
    return true;
  }

  /**
   * The replica a request goes to: the one named (a NotLeader's leader), else the one that answered
   * last, else the first up and running — never `not` (the one that just refused). With one CLC: the CLC, if up.
   */
  private replica(not: string | undefined, named?: string): SimClc | undefined {
    // A paused replica (a frozen VM) does not answer: the client's connection goes to another.
    const up = this.cloud.clcs.filter((c): c is SimClc => c !== undefined && c.life.isAlive && !c.life.isPaused && c.core !== undefined && c.name !== not);
    return up.find((c) => c.name === named) ?? up.find((c) => c.name === this.lastAnswered) ?? up[0];
  }
}
