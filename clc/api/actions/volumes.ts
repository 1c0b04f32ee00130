/**
 * CreateVolume, DeleteVolume and DescribeVolumes (issue 18): EC2's parameters, answers and codes, so
 * boto3 and the aws CLI work with their defaults. The work is clc/core/volumeLifecycle.ts; the
 * volumes live in clc.json and their data in the CLC's volume backend (--storage-dir).
 */
import { z } from 'zod';
import { CLIENT_TOKEN_PATTERN } from '../../core/runTokens.js';
import { canonicalFilters, selectionDigest, type PageScope } from '../../core/paging.js';
import { VOLUME_PAGE_ORDER } from '../../core/pageOrders.js';
import { ClcErrors } from '../../core/errors.js';
import { createVolume, deleteVolume } from '../../core/volumeLifecycle.js';
import { compareVolumes } from '../../core/volumeRecords.js';
import { volumeNotFound } from '../../core/volumeOps.js';
import { isVolumeFilterName, VOLUME_FILTER_NAMES, volumeFilterPredicate } from '../../core/volumeFilters.js';
import type { VolumeBackend } from '../../core/volumeBackend.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, filterListParam, intParam, paramList, parseActionParams } from '../actionParams.js';
import { cursorOf, pagingInputOf, pagingParamsUpTo, servePage } from '../paging.js';
import type { ParamMap } from '../queryParams.js';
import { volumeFields, volumeItem } from '../render/volumeItems.js';
import { volumeTagSpecificationsParam } from '../tagParams.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { VOLUME_ID } from '../../../shared/protocol/volumes.js';

/** gp2's bounds, EC2's default type's: 1 GiB to 16 TiB. */
export const MIN_VOLUME_GIB = 1;
export const MAX_VOLUME_GIB = 16_384;
/** EC2's volume types; Ferry's file backend is the same for each and records the name. */
export const VOLUME_TYPES = Object.freeze(['standard', 'gp2', 'gp3', 'io1', 'io2', 'st1', 'sc1']);
/** DescribeVolumes' MaxResults goes to 500 (EC2's). */
const MAX_VOLUME_PAGE = 500;

/** Volume ids: EC2 form; case is normalised as for instance ids. */
export const volumeIdParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s) => VOLUME_ID.test(s), coded('InvalidVolumeID.Malformed', 'malformed volume id'));

/** The CLC's volume backend, or Unsupported when it was started without one. */
export function backendOf(ctx: ActionContext): VolumeBackend {
  if (!ctx.volumes) throw ClcErrors.make('Unsupported', { detail: 'Volumes on a CLC started without --storage-dir' });
  return ctx.volumes;
}

const createSchema = z.strictObject({
  Size: intParam(MIN_VOLUME_GIB, MAX_VOLUME_GIB),
  AvailabilityZone: z.string(),
  VolumeType: z.string().refine((t) => VOLUME_TYPES.includes(t), `expected one of ${VOLUME_TYPES.join(', ')}`).optional(),
  SnapshotId: z.string().optional(),
  Encrypted: z.string().optional(),
  ClientToken: z.string().refine((s) => CLIENT_TOKEN_PATTERN.test(s), 'expected 1 to 64 printable ASCII characters').optional(),
  TagSpecification: volumeTagSpecificationsParam.optional(),
}).superRefine((p, issues) => {
  // Ferry keeps no snapshots, and its file backend does not encrypt: said, never ignored.
  if (p.SnapshotId !== undefined && p.SnapshotId !== '') issues.addIssue({ code: 'custom', path: ['SnapshotId'], ...coded('Unsupported', 'snapshots', { detail: 'Creating a volume from a snapshot' }) });
  if (p.Encrypted !== undefined && p.Encrypted.toLowerCase() === 'true') issues.addIssue({ code: 'custom', path: ['Encrypted'], ...coded('Unsupported', 'encryption', { detail: 'An encrypted volume' }) });
}).transform((p) => ({
  size: p.Size, zone: p.AvailabilityZone, volumeType: p.VolumeType ?? 'standard', clientToken: p.ClientToken, tags: p.TagSpecification ?? [],
}));

export type CreateVolumeInput = Readonly<z.infer<typeof createSchema>>;

export function parseCreateVolume(params: ParamMap): CreateVolumeInput {
  return parseActionParams(createSchema, params);
}

async function runCreate(input: CreateVolumeInput, ctx: ActionContext): Promise<XmlObject> {
  const v = await createVolume(ctx, backendOf(ctx), {
    volumeId: `vol-${ctx.ids()}`, ownerId: ctx.principal.accountId, size: input.size, partition: input.zone,
    volumeType: input.volumeType, clientToken: input.clientToken, tags: input.tags,
  });
  return volumeFields(v);
}

export const createVolumeAction = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseCreateVolume, run: runCreate });

const deleteSchema = z.strictObject({ VolumeId: volumeIdParam }).transform((p) => ({ volumeId: p.VolumeId }));
export type DeleteVolumeInput = Readonly<z.infer<typeof deleteSchema>>;

export function parseDeleteVolume(params: ParamMap): DeleteVolumeInput {
  return parseActionParams(deleteSchema, params);
}

async function runDelete(input: DeleteVolumeInput, ctx: ActionContext): Promise<XmlObject> {
  await deleteVolume(ctx, backendOf(ctx), input.volumeId);
  return { return: true };
}

export const deleteVolumeAction = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDeleteVolume, run: runDelete });

const DESCRIBE = 'DescribeVolumes';

const describeSchema = z.strictObject({
  VolumeId: paramList(volumeIdParam).optional(),
  Filter: filterListParam(isVolumeFilterName, VOLUME_FILTER_NAMES.join(', ')).optional(),
  ...pagingParamsUpTo(MAX_VOLUME_PAGE),
}).transform((p) => ({
  volumeIds: [...new Set(p.VolumeId ?? [])],
  filters: p.Filter ?? [],
  paging: pagingInputOf(p),
})).refine((p) => p.volumeIds.length === 0 || p.paging.maxResults === undefined, {
  path: ['MaxResults'], ...coded('InvalidParameterCombination', 'The parameter volumeSet cannot be used with the parameter maxResults'),
});

export type DescribeVolumesInput = Readonly<z.infer<typeof describeSchema>>;

export function parseDescribeVolumes(params: ParamMap): DescribeVolumesInput {
  return parseActionParams(describeSchema, params);
}

async function runDescribe(input: DescribeVolumesInput, ctx: ActionContext): Promise<XmlObject> {
  const now = ctx.clock.now();
  const scope: PageScope = { action: DESCRIBE, selection: selectionDigest({ ids: [...input.volumeIds].sort(), filters: canonicalFilters(input.filters) }) };
  const state = ctx.store.read();
  const cursor = cursorOf(state, scope, VOLUME_PAGE_ORDER, input.paging, now);
  const missing = input.volumeIds.filter((id) => state.volumes[id] === undefined);
  if (missing.length > 0) throw volumeNotFound(missing);
  const wanted = new Set(input.volumeIds);
  const chosen = Object.values(state.volumes)
    .filter((v) => wanted.size === 0 || wanted.has(v.volumeId))
    .filter(volumeFilterPredicate(input.filters))
    .sort(compareVolumes);
  const page = await servePage(ctx.store, scope, VOLUME_PAGE_ORDER, chosen, cursor, input.paging, now);
  return { volumeSet: page.items.map(volumeItem), nextToken: page.nextToken };
}

export const describeVolumes = defineAction({ namespace: EC2_NAMESPACE, acceptsDryRun: true, parse: parseDescribeVolumes, run: runDescribe });
