/**
 * Volumes in the NC's live-migration handshake (issue 18 part 3), two NodeControllers over linked
 * fake hypervisors with a recording VolumeConnector: the destination connects the instance's volumes
 * before its hypervisor prepares, the instance arrives with them attached, the source disconnects
 * them once it moved; a volume the destination cannot reach refuses the prepare and leaves nothing;
 * a rollback disconnects them on the destination and leaves them attached on the source. A terminate
 * disconnects the destroyed domain's volumes and its tombstone holds none.
 */
import { describe, expect, it } from 'vitest';
import { NcErrors } from '../../nc/errors.js';
import type { VolumeConnector } from '../../nc/volumeConnector.js';
import type { VolumeAttachmentSpec } from '../../shared/protocol/volumes.js';
import { settle } from './fixtures.js';
import { A, commit, DST, hv, item, pair, plan, prepareDest, prepareSource, rollback, SRC, whereIs, type Pair } from './migrationFixtures.js';
import { codeOf } from '../helpers/codeOf.js';

const VOL: VolumeAttachmentSpec = { volumeId: 'vol-0000e001', device: '/dev/vdb', path: '/srv/storage/volumes/vol-0000e001.img' };

/** Logs each call as `<host> connect|disconnect <instance> <volumes>`; `unreachable` volumes are refused. */
class RecordingConnector implements VolumeConnector {
  readonly unreachable = new Set<string>();
  /** Also logged into this host's driver call log, so the order against hypervisor calls shows. */
  driverLog: string[] | undefined;
  constructor(private readonly host: string, private readonly log: string[]) {}
  connect(instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void> {
    const bad = volumes.find((v) => this.unreachable.has(v.volumeId));
    if (bad) return Promise.reject(NcErrors.make('VolumeUnavailable', { host: this.host, instanceId, volumeId: bad.volumeId, detail: 'not mounted here' }));
    this.log.push(`${this.host} connect ${instanceId} ${volumes.map((v) => v.volumeId).join(',')}`);
    this.driverLog?.push(`volumes connect ${instanceId}`);
    return Promise.resolve();
  }
  disconnect(instanceId: string, volumes: readonly VolumeAttachmentSpec[]): Promise<void> {
    this.log.push(`${this.host} disconnect ${instanceId} ${volumes.map((v) => v.volumeId).join(',')}`);
    return Promise.resolve();
  }
}

async function withVolume(): Promise<{ p: Pair; log: string[]; connectors: Map<string, RecordingConnector> }> {
  const log: string[] = [];
  const connectors = new Map<string, RecordingConnector>();
  const p = await pair({ volumeConnector: (host) => connectors.set(host, new RecordingConnector(host, log)).get(host) as RecordingConnector });
  await p.src.controller.attachVolume({ instanceId: A, ...VOL });
  const dst = connectors.get(DST);
  if (dst) dst.driverLog = p.dst.log;
  return { p, log, connectors };
}

function prepareWithVolume() {
  const req = prepareDest(A);
  if (req.action !== 'prepare' || req.role !== 'destination') throw new Error('not a destination prepare');
  return { ...req, incoming: { ...req.incoming, volumes: [{ ...VOL, status: 'attached' as const }] } };
}

describe('volumes in the migration handshake', () => {
  it('connects the volumes on the destination before its hypervisor prepares; the instance arrives with them; the source lets them go', async () => {
    const { p, log } = await withVolume();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    p.dst.log.length = 0;
    const answer = await p.dst.controller.migrate(prepareWithVolume());
    expect(answer.incoming).toMatchObject({ state: 'ready', volumes: [{ ...VOL, status: 'attached' }] });
    expect(p.dst.log.filter((l) => !l.startsWith('persist'))).toEqual([`volumes connect ${A}`, `prepareIncoming ${A} ${hv(A)}`]);
    expect(log).toEqual([`${DST} connect ${A} ${VOL.volumeId}`]);
    expect(p.dst.store.read().incoming[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);

    await p.src.controller.migrate(commit(A));
    await settle();
    p.src.driver.complete(hv(A));
    await settle();
    expect(whereIs(p)).toEqual({ records: [DST], running: [DST] });
    expect(p.dst.store.read().instances[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    expect((await p.dst.controller.describe()).instances[0]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    expect(log).toContain(`${SRC} disconnect ${A} ${VOL.volumeId}`);
    expect(log).not.toContain(`${DST} disconnect ${A} ${VOL.volumeId}`);
  });

  it('a volume the destination cannot reach refuses the prepare: no record, nothing asked of its hypervisor', async () => {
    const { p, connectors } = await withVolume();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    connectors.get(DST)?.unreachable.add(VOL.volumeId);
    expect(await codeOf(p.dst.controller.migrate(prepareWithVolume()))).toBe('VolumeUnavailable');
    expect(p.dst.store.read().incoming[A]).toBeUndefined();
    expect(p.dst.driver.calls.filter((c) => c.startsWith('prepareIncoming'))).toEqual([]);
    expect(p.src.store.read().instances[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
  });

  it('a rollback disconnects them on the destination and leaves them attached on the source', async () => {
    const { p, log } = await withVolume();
    await p.src.controller.migrate(prepareSource(plan([item(A)])));
    await p.dst.controller.migrate(prepareWithVolume());
    await p.dst.controller.migrate(rollback('destination', { instanceId: A }));
    await p.src.controller.migrate(rollback('source', { instanceId: A }));
    expect(log).toEqual([`${DST} connect ${A} ${VOL.volumeId}`, `${DST} disconnect ${A} ${VOL.volumeId}`]);
    expect(p.dst.store.read().incoming[A]).toBeUndefined();
    expect(whereIs(p)).toEqual({ records: [SRC], running: [SRC] });
    expect(p.src.store.read().instances[A]?.volumes).toEqual([{ ...VOL, status: 'attached' }]);
    expect(p.src.driver.domains.get(A)?.volumes).toEqual([VOL]);
  });
});

describe('volumes of a destroyed domain', () => {
  it('a terminate (an obsolete copy on a host back from a fence, or a user\'s) disconnects them after the destroy and leaves a tombstone that holds none', async () => {
    const { p, log } = await withVolume();
    p.src.log.length = 0;
    expect(await p.src.controller.terminate(A)).toEqual({ instanceId: A, previousState: 'running', currentState: 'terminated' });
    expect(p.src.driver.domains.has(A)).toBe(false);
    expect(log).toEqual([`${SRC} disconnect ${A} ${VOL.volumeId}`]);
    expect(p.src.store.read().instances[A]).toMatchObject({ phase: 'terminated' });
    expect(p.src.store.read().instances[A]?.volumes).toBeUndefined();
    expect((await p.src.controller.describe()).instances.find((i) => i.instanceId === A)?.volumes).toBeUndefined();
    // A repeat answers as the first did and disconnects nothing more.
    expect(await p.src.controller.terminate(A)).toEqual({ instanceId: A, previousState: 'running', currentState: 'terminated' });
    expect(log).toHaveLength(1);
  });
});
