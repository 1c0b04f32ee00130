/**
 * CreateTags and DeleteTags (EC2): user tags on instances and volumes, stored on their records in clc.json.
 * Not a change to any partition: no CC is asked and the change gate is not entered, since a tag
 * moves nothing and takes no capacity. All or nothing: every id and every tag is checked, the
 * instances are found and the limit applied inside one store update, and the reply goes out once
 * that update is durable (clc/core/userTags.ts has the rules).
 *
 * The admin may tag every instance and volume the CLC has a record of; another identity only its own
 * account's, the others being InvalidInstanceID.NotFound / InvalidVolume.NotFound as EC2 answers for
 * another account's ids.
 */
import { z } from 'zod';
import { ClcErrors } from '../../core/errors.js';
import { dedupe, instanceNotFound } from '../../core/instanceLookup.js';
import { MAX_USER_TAGS, planRetag, splitResourceIds, withoutTags, withTags, type Tag } from '../../core/userTags.js';
import { volumeNotFound } from '../../core/volumeOps.js';
import { defineAction, type ActionContext } from '../action.js';
import { paramList, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { resourceIdParam, tagsToDeleteParam, tagsToSetParam } from '../tagParams.js';
import { EC2_NAMESPACE, type XmlObject } from '../xmlResponse.js';

/** EC2's limit on ResourceId.N per request. */
export const MAX_TAGGED_RESOURCES = 1000;

const resourceIds = paramList(resourceIdParam).max(MAX_TAGGED_RESOURCES, `at most ${MAX_TAGGED_RESOURCES} resource ids per request`);

/** At most this many ids are named in a log line. */
const LOGGED_IDS = 5;

/** A record that carries user tags (an instance's or a volume's). */
interface TagHolder { userTags?: Tag[] | undefined }

function writeTags(records: Record<string, TagHolder>, next: ReadonlyMap<string, readonly Tag[]>): void {
  for (const [id, tags] of next) {
    const r = records[id];
    if (r === undefined) continue;
    if (tags.length > 0) r.userTags = [...tags];
    else delete r.userTags;
  }
}

/**
 * Writes each instance's and volume's tags after `edit`, or throws (NotFound, TagLimitExceeded)
 * having written nothing: both kinds are planned before either is written.
 */
async function retag(ctx: ActionContext, action: string, resourceIds: readonly string[], edit: (tags: readonly Tag[] | undefined) => readonly Tag[]): Promise<XmlObject> {
  const { instanceIds, volumeIds } = splitResourceIds(resourceIds);
  await ctx.store.update((d) => {
    const instances = planRetag(d.instances, instanceIds, ctx.principal, edit);
    if (instances.kind === 'not-found') throw instanceNotFound(instances.ids);
    const volumes = planRetag(d.volumes, volumeIds, ctx.principal, edit);
    if (volumes.kind === 'not-found') throw volumeNotFound(volumes.ids);
    const over = [instances, volumes].flatMap((p) => (p.kind === 'over-limit' ? p.ids : []));
    if (over.length > 0) {
      throw ClcErrors.make('TagLimitExceeded', { detail: `${over.join(', ')} would have more than ${MAX_USER_TAGS} user tags; nothing was changed` });
    }
    if (instances.kind === 'ok') writeTags(d.instances, instances.next);
    if (volumes.kind === 'ok') writeTags(d.volumes, volumes.next);
  });
  ctx.logger.info({ action, resourceIds: resourceIds.slice(0, LOGGED_IDS), instances: instanceIds.length, volumes: volumeIds.length }, 'user tags changed');
  return { return: true };
}

const createSchema = z.strictObject({
  ResourceId: resourceIds,
  Tag: tagsToSetParam.optional(),
}).transform((p) => ({ resourceIds: dedupe(p.ResourceId), tags: p.Tag ?? [] }));

export type CreateTagsInput = Readonly<z.infer<typeof createSchema>>;

export function parseCreateTags(params: ParamMap): CreateTagsInput {
  const input = parseActionParams(createSchema, params);
  // EC2's answer to a CreateTags without tags (botocore sends none for Tags=[]).
  if (input.tags.length === 0) throw ClcErrors.withMessage('InvalidParameterValue', 'You must specify one or more tags to create (Tag.N.Key, Tag.N.Value)');
  return input;
}

export const createTags = defineAction({
  namespace: EC2_NAMESPACE,
  acceptsDryRun: true,
  parse: parseCreateTags,
  run: (input: CreateTagsInput, ctx: ActionContext) => retag(ctx, 'CreateTags', input.resourceIds, (tags) => withTags(tags, input.tags)),
});

const deleteSchema = z.strictObject({
  ResourceId: resourceIds,
  Tag: tagsToDeleteParam.optional(),
}).transform((p) => ({ resourceIds: dedupe(p.ResourceId), selectors: p.Tag }));

export type DeleteTagsInput = Readonly<z.infer<typeof deleteSchema>>;

export function parseDeleteTags(params: ParamMap): DeleteTagsInput {
  return parseActionParams(deleteSchema, params);
}

export const deleteTags = defineAction({
  namespace: EC2_NAMESPACE,
  acceptsDryRun: true,
  parse: parseDeleteTags,
  // No Tag.N at all: every user tag of the resources, as EC2 (system tags are computed, never deleted).
  run: (input: DeleteTagsInput, ctx: ActionContext) => retag(ctx, 'DeleteTags', input.resourceIds, (tags) => withoutTags(tags, input.selectors)),
});
