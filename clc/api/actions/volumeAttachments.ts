/**
 * AttachVolume and DetachVolume (issue 18): EC2's parameters and answers. Both are changes of the
 * volume's partition (they wait in the change gate behind a DisableService or MigrateInstances);
 * the work and every refusal are clc/core/volumeOps.ts and volumeRules.ts. Ferry answers once the
 * node has attached (detached) the volume, so the reply's status is `attached` (`detached`).
 */
import { z } from 'zod';
import { attachVolume, detachVolume } from '../../core/volumeOps.js';
import { deviceSchema } from '../../../shared/protocol/volumes.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, instanceIdParam, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { attachmentItem } from '../render/volumeItems.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { backendOf, volumeIdParam } from './volumes.js';

const deviceParam = z.string().refine((d) => deviceSchema.safeParse(d).success, coded('InvalidParameterValue', 'expected a device name like /dev/sdf or /dev/vdb'));

const attachSchema = z.strictObject({
  VolumeId: volumeIdParam,
  InstanceId: instanceIdParam,
  Device: deviceParam,
}).transform((p) => ({ volumeId: p.VolumeId, instanceId: p.InstanceId, device: p.Device }));

export type AttachVolumeInput = Readonly<z.infer<typeof attachSchema>>;

export function parseAttachVolume(params: ParamMap): AttachVolumeInput {
  return parseActionParams(attachSchema, params);
}

async function runAttach(input: AttachVolumeInput, ctx: ActionContext): Promise<XmlObject> {
  backendOf(ctx);
  const v = await attachVolume(ctx, input);
  const { deleteOnTermination: _dot, ...item } = attachmentItem(v);
  return item;
}

export const attachVolumeAction = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseAttachVolume, run: runAttach });

const detachSchema = z.strictObject({
  VolumeId: volumeIdParam,
  InstanceId: instanceIdParam.optional(),
  Device: deviceParam.optional(),
  Force: boolParam.optional(),
}).transform((p) => ({ volumeId: p.VolumeId, instanceId: p.InstanceId, device: p.Device, force: p.Force ?? false }));

export type DetachVolumeInput = Readonly<z.infer<typeof detachSchema>>;

export function parseDetachVolume(params: ParamMap): DetachVolumeInput {
  return parseActionParams(detachSchema, params);
}

async function runDetach(input: DetachVolumeInput, ctx: ActionContext): Promise<XmlObject> {
  backendOf(ctx);
  const v = await detachVolume(ctx, input);
  const { deleteOnTermination: _dot, ...item } = attachmentItem(v, 'detached');
  return item;
}

export const detachVolumeAction = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDetachVolume, run: runDetach });
