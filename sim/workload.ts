/**
 * Runs workload events as the CLC would: each CC operation is called with a request parsed by its
 * schema (defaults applied, as the wire server does), without waiting, and its answer — if the
 * CC lives to give one — goes into the ledger. The CLC tier itself is not simulated yet.
 */
import { CC_OPS, type CcOp, type CcRequest, type CcResponse } from '../shared/protocol/ccProtocol.js';
import { isFerryError } from '../shared/errors/registry.js';
import type { Ledger } from './ledger.js';
import { M1_LARGE, M1_SMALL } from './settings.js';
import type { SimCloud } from './simCloud.js';
import type { WorkloadEvent } from './schedule.js';

const VM_TYPES = [M1_SMALL, M1_LARGE];

/** What a request was about, for the trace. */
function brief(raw: unknown): string {
  const r = raw as { instanceIds?: string[]; instanceId?: string; host?: string; sourceHost?: string; migrationId?: string; stateName?: string };
  return [r.instanceIds?.join(','), r.instanceId, r.sourceHost, r.host, r.stateName, r.migrationId].filter((x) => x !== undefined).join(' ');
}

export class Workload {
  constructor(private readonly cloud: SimCloud, private readonly ledger: Ledger, private readonly trace: (line: string) => void) {}

  run(e: WorkloadEvent): void {
    const l = this.ledger;
    switch (e.kind) {
      case 'run': {
        const ids = Array.from({ length: e.count }, () => `i-${this.cloud.hex8()}`);
        const vmType = e.large ? M1_LARGE : M1_SMALL;
        this.call('ccRunInstances', {
          reservationId: `r-${this.cloud.hex8()}`, imageId: 'emi-00000001', ownerId: 'sim', vmType, instanceIds: ids,
          minCount: Math.min(e.minCount, e.count), launchTime: this.cloud.clock.now(),
        }, (r) => l.acknowledgeRun(r.instances.map((i) => i.instanceId)));
        return;
      }
      case 'terminate': {
        const live = l.live();
        const id = live[e.pick % Math.max(1, live.length)];
        if (id === undefined) return;
        // Asked is enough to count as maybe gone (the answer may be lost); refused at the door is not.
        const refused = (code: string): void => {
          // The NC refused before doing anything: the instance is expected alive again.
          if (code === 'MigrationInProgress') l.terminating.delete(id);
        };
        if (this.call('ccTerminateInstances', { instanceIds: [id] }, () => l.terminated.add(id), refused)) l.terminating.add(id);
        return;
      }
      case 'modify': {
        const acknowledge = l.modifySent(e.host, e.state);
        this.call('ccModifyNode', { host: e.host, stateName: e.state, vmTypes: VM_TYPES }, acknowledge);
        return;
      }
      case 'drain':
        this.call('ccMigrateInstances', {
          sourceHost: e.host, destinations: [...e.destinations], allowHosts: e.allowHosts, partial: e.partial, reserveDestinations: e.reserve, vmTypes: VM_TYPES,
        }, (r) => l.migrations.push(r.migrationId));
        return;
      case 'migrateOne': {
        const live = l.live();
        const id = live[e.pick % Math.max(1, live.length)];
        if (id === undefined) return;
        this.call('ccMigrateInstances', { instanceId: id, destinations: [...e.destinations], allowHosts: e.allowHosts, vmTypes: VM_TYPES }, (r) => l.migrations.push(r.migrationId));
        return;
      }
      case 'cancel': {
        const id = l.migrations[e.pick % Math.max(1, l.migrations.length)];
        if (id !== undefined) this.call('ccCancelMigration', { migrationId: id }, () => undefined);
        return;
      }
    }
  }

  /** Sends the request unless the CC is down (connection refused); true when it was sent. */
  private call<O extends CcOp>(op: O, raw: unknown, onAnswer: (res: CcResponse<O>) => void, onError?: (code: string) => void): boolean {
    const cc = this.cloud.cc;
    if (!cc?.life.isAlive) {
      this.trace(`clc ${op} refused: cc is down`);
      return false;
    }
    const req = CC_OPS[op].request.parse(raw) as CcRequest<O>;
    const handler = cc.service.ops[op] as (r: CcRequest<O>, ctx: { peer: string }) => Promise<CcResponse<O>>;
    void cc.life.guard(handler(req, { peer: 'clc' })).then(
      (res) => {
        this.trace(`clc ${op} ${brief(raw)} ok`);
        onAnswer(res);
      },
      (err: unknown) => {
        this.trace(`clc ${op} ${brief(raw)} failed: ${isFerryError(err) ? err.code : String(err)}`);
        if (isFerryError(err)) onError?.(err.code);
      },
    );
    return true;
  }
}
