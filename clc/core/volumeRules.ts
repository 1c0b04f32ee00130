/**
 * Which AttachVolume and DetachVolume requests the CLC takes (issue 18, part 2's refusals), pure:
 * the volume's record, the instance as the CCs report it and the other volumes in, a coded error or
 * nothing out. volumeOps.ts asks before it persists anything, and again inside the store update.
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { ROOT_DEVICES } from '../../shared/protocol/volumes.js';
import { ClcErrors } from './errors.js';
import { isMigrating, type InstanceView } from './instanceView.js';
import type { VolumeRecord } from './volumeRecords.js';

export interface AttachAsk {
  readonly volumeId: string;
  readonly instanceId: string;
  readonly device: string;
}

/**
 * Why `instance` cannot take or give up a volume now; undefined: it can. `stoppedToo`: a forced
 * detach, which EC2 allows from an instance that is not running (never from a migrating or fenced one).
 */
export function instanceRefusal(instance: InstanceView, fenced: ReadonlySet<string>, action: string, stoppedToo = false): FerryError | undefined {
  if (isMigrating(instance)) {
    return ClcErrors.make('OperationNotPermitted', {
      action, instanceIds: instance.instanceId,
      detail: `instance ${instance.instanceId}: it is migrating (${instance.migration.state}). Nothing was done; retry once the migration has finished, or cancel it with CancelMigration`,
    });
  }
  if (instance.state !== 'running' && !stoppedToo) {
    return ClcErrors.make('IncorrectInstanceState', { instanceId: instance.instanceId, state: instance.state, detail: `${action} needs a running instance` });
  }
  if (instance.host !== undefined && fenced.has(instance.host)) {
    return ClcErrors.make('IncorrectInstanceState', {
      instanceId: instance.instanceId, state: `on host ${instance.host}, which host HA is fencing or has fenced`, detail: `${action} is refused until the instance runs elsewhere`,
    });
  }
  return undefined;
}

/** Every reason AttachVolume must refuse, in EC2's order of checks; undefined: go ahead. */
export function attachRefusal(
  volume: VolumeRecord, instance: InstanceView, volumes: Readonly<Record<string, VolumeRecord>>, ask: AttachAsk, fenced: ReadonlySet<string>,
): FerryError | undefined {
  if (volume.partition !== instance.partition) {
    return ClcErrors.make('InvalidVolume.ZoneMismatch', {
      volumeId: volume.volumeId, instanceId: instance.instanceId, volumeZone: volume.partition, instanceZone: instance.partition,
    });
  }
  if (volume.state === 'in-use') {
    const a = volume.attachment;
    const detail = a?.instanceId === ask.instanceId ? `it is ${a.status} as ${a.device}` : `it is ${a?.status ?? 'attached'} to another instance`;
    return ClcErrors.make('VolumeInUse', { volumeId: volume.volumeId, instanceId: a?.instanceId ?? '?', detail });
  }
  if (volume.state !== 'available') {
    return ClcErrors.make('IncorrectState', { volumeId: volume.volumeId, state: volume.state, detail: 'only an available volume can be attached' });
  }
  const why = instanceRefusal(instance, fenced, 'AttachVolume');
  if (why) return why;
  const taken = ROOT_DEVICES.includes(ask.device)
    ? 'the root disk'
    : Object.values(volumes).find((v) => v.attachment?.instanceId === ask.instanceId && v.attachment.device === ask.device)?.volumeId;
  if (taken !== undefined) {
    return ClcErrors.make('InvalidParameterValue', {
      parameter: 'Device', value: ask.device, detail: `Attachment point ${ask.device} is already in use (${taken})`,
    });
  }
  return undefined;
}

export interface DetachAsk {
  readonly volumeId: string;
  readonly instanceId?: string | undefined;
  readonly device?: string | undefined;
  readonly force: boolean;
}

/** Why DetachVolume must refuse, from the volume's record alone; undefined: go ahead. */
export function detachRefusal(volume: VolumeRecord, ask: DetachAsk): FerryError | undefined {
  const a = volume.attachment;
  if (!a) return ClcErrors.make('IncorrectState', { volumeId: volume.volumeId, state: volume.state, detail: 'it is not attached' });
  if (ask.instanceId !== undefined && ask.instanceId !== a.instanceId) {
    return ClcErrors.make('InvalidAttachment.NotFound', { detail: `for volume ${volume.volumeId} on instance ${ask.instanceId} (it is attached to ${a.instanceId})` });
  }
  if (ask.device !== undefined && ask.device !== a.device) {
    return ClcErrors.make('InvalidAttachment.NotFound', { detail: `${ask.device} for volume ${volume.volumeId} (it is attached as ${a.device})` });
  }
  // A detach that got no answer may be asked again; an attach that got none needs Force to be undone.
  if (a.status === 'attaching' && !ask.force) {
    return ClcErrors.make('IncorrectState', { volumeId: volume.volumeId, state: `in-use (${a.status})`, detail: 'its attach got no answer; DetachVolume with Force=true takes it away' });
  }
  return undefined;
}
