/**
 * The tag parameters of CreateTags, DeleteTags and RunInstances, checked once at the edge with the
 * rules of clc/core/userTags.ts: `ResourceId.N`, `Tag.N.Key` / `Tag.N.Value`, and
 * `TagSpecification.N.ResourceType` / `TagSpecification.N.Tag.M.*`. Every refusal is a coded issue
 * naming the AWS parameter (actionParams.ts turns it into the error).
 */
import { z } from 'zod';
import {
  classifyResourceId, describeTagProblem, MAX_USER_TAGS, repeatedKey, sortTags, tagKeyProblem, tagValueProblem,
  type Tag, type TagProblem, type TagSelector,
} from '../core/userTags.js';
import { coded, paramList } from './actionParams.js';

type Issues = z.core.$RefinementCtx;

function addProblem(issues: Issues, path: (string | number)[], p: TagProblem): void {
  issues.addIssue({ code: 'custom', path, ...coded('InvalidParameterValue', describeTagProblem(p)) });
}

/** The resource types Ferry has; EC2's other taggable types name nothing here. */
const INSTANCES_ONLY = 'Ferry tags instances (i- followed by 8 hex digits) and volumes (vol- followed by 8 or 17 hex digits) only';

/** `ResourceId.N`: an instance or volume id (lower-cased), else InvalidInstanceID.Malformed or EC2's InvalidID. */
export const resourceIdParam = z.string().transform((id, issues) => {
  const c = classifyResourceId(id);
  if (c.kind === 'instance') return c.instanceId;
  if (c.kind === 'volume') return c.volumeId;
  if (c.kind === 'malformed-instance') issues.addIssue({ code: 'custom', ...coded('InvalidInstanceID.Malformed', 'malformed instance id') });
  else if (c.kind === 'other-resource') issues.addIssue({ code: 'custom', ...coded('InvalidID', `${INSTANCES_ONLY}; a ${c.prefix}- id names no resource it has`) });
  else issues.addIssue({ code: 'custom', ...coded('InvalidID', `it is not an EC2 resource id; ${INSTANCES_ONLY}`) });
  return z.NEVER;
});

const tagItem = z.strictObject({ Key: z.string().optional(), Value: z.string().optional() });

/** Checks a key (absent is empty) and, when `checkValue`, a value; issues at `Tag.N.Key` / `Tag.N.Value`. */
function checkTagItem(t: z.infer<typeof tagItem>, issues: Issues, checkValue: boolean): void {
  const keyProblem = tagKeyProblem(t.Key ?? '');
  if (keyProblem) addProblem(issues, ['Key'], keyProblem);
  const valueProblem = checkValue && t.Value !== undefined ? tagValueProblem(t.Value) : undefined;
  if (valueProblem) addProblem(issues, ['Value'], valueProblem);
}

/**
 * Tags to set, `Tag.N.Key` / `Tag.N.Value` (an absent value is the empty string, as EC2 and
 * Eucalyptus read it): valid keys and values, no key twice, at most MAX_USER_TAGS; in key order.
 */
export const tagsToSetParam = paramList(tagItem.superRefine((t, issues) => checkTagItem(t, issues, true)))
  .superRefine((tags, issues) => {
    const keys = tags.map((t) => t.Key ?? '');
    const twice = repeatedKey(keys);
    if (twice !== undefined) {
      issues.addIssue({ code: 'custom', path: [keys.lastIndexOf(twice), 'Key'], ...coded('InvalidParameterValue', `Duplicate tag key '${twice}' specified.`) });
    }
    if (tags.length > MAX_USER_TAGS) {
      issues.addIssue({ code: 'custom', path: [MAX_USER_TAGS, 'Key'], ...coded('TagLimitExceeded', `${tags.length} tags given; an instance holds at most ${MAX_USER_TAGS}`) });
    }
  })
  .transform((tags): Tag[] => sortTags(tags.map((t) => ({ key: t.Key ?? '', value: t.Value ?? '' }))));

/** Tags to delete, `Tag.N.Key` with an optional `Tag.N.Value` (given, even empty: only that key=value). */
export const tagsToDeleteParam = paramList(tagItem.superRefine((t, issues) => checkTagItem(t, issues, false)))
  .transform((tags): TagSelector[] => tags.map((t) => ({ key: t.Key ?? '', ...(t.Value !== undefined ? { value: t.Value } : {}) })));

export const INSTANCE_RESOURCE_TYPE = 'instance';

/**
 * RunInstances' `TagSpecification.N`: each names ResourceType `instance` (once) and at least one
 * tag. EC2 also tags a launch's `volume`s; a launch makes none in Ferry, so that is refused like any
 * type RunInstances cannot tag. The instances' tags, in key order ([] without any).
 */
function tagSpecificationsOf(resourceType: string, whyNot: (type: string) => string) {
  return paramList(z.strictObject({
  ResourceType: z.string().optional(),
  Tag: tagsToSetParam.optional(),
}).superRefine((spec, issues) => {
  const type = spec.ResourceType;
  if (type === undefined || type === '') {
    issues.addIssue({ code: 'custom', path: ['ResourceType'], ...coded('InvalidParameterValue', 'Tag specification resource type must have a value') });
  } else if (type !== resourceType) {
    const why = whyNot(type);
    issues.addIssue({ code: 'custom', path: ['ResourceType'], ...coded('InvalidParameterValue', `'${type}' is not a valid taggable resource type for this operation: ${why}`) });
  }
  if (spec.Tag === undefined || spec.Tag.length === 0) {
    issues.addIssue({ code: 'custom', path: ['Tag'], ...coded('InvalidParameterValue', 'Tag specification must have at least one tag') });
  }
})).superRefine((specs, issues) => {
  const second = specs.findIndex((s, i) => specs.findIndex((o) => o.ResourceType === s.ResourceType) < i);
  if (second >= 0) {
    issues.addIssue({ code: 'custom', path: [second, 'ResourceType'], ...coded('InvalidParameterValue', 'The same resource type may not be specified more than once in tag specifications') });
  }
}).transform((specs): Tag[] => specs.flatMap((s) => s.Tag ?? []));
}

export const tagSpecificationsParam = tagSpecificationsOf(INSTANCE_RESOURCE_TYPE, (type) => (
  type === 'volume' ? 'RunInstances makes no volumes in Ferry (CreateVolume tags its own)' : `RunInstances tags ${INSTANCE_RESOURCE_TYPE}s only`
));

/** CreateVolume's `TagSpecification.N`: ResourceType `volume` (once), at least one tag; the volume's tags in key order. */
export const volumeTagSpecificationsParam = tagSpecificationsOf('volume', () => 'CreateVolume tags volumes only');
