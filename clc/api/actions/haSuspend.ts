/**
 * SuspendHA / ResumeHA: automation (new recoveries and fences) paused for exactly one of `Host`,
 * `Cluster` or `Partition` (Ferry's clusters are its partitions; both keys exist as in
 * clc/ha/suspension.ts). SuspendHA takes `Until` (ISO time) or `DurationMinutes`, not both, or
 * neither for "until lifted", and a `Reason`. ResumeHA lifts that scope's suspension and says
 * whether there was one.
 */
import { z } from 'zod';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import type { SuspendScope } from '../../ha/haControl.js';
import { defineAction, type ActionContext } from '../action.js';
import { coded, intParam, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { iso } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa, textParam, timeParam } from './haCommon.js';

const scopeShape = { Host: hostSchema.optional(), Cluster: partitionSchema.optional(), Partition: partitionSchema.optional() };

type ScopeParams = { Host?: string | undefined; Cluster?: string | undefined; Partition?: string | undefined };

const oneScope = {
  path: ['Host'],
  ...coded('InvalidParameterCombination', 'Give exactly one of Host, Cluster or Partition'),
};

const countScopes = (p: ScopeParams): number => [p.Host, p.Cluster, p.Partition].filter((v) => v !== undefined).length;

function scopeOf(p: ScopeParams): SuspendScope {
  if (p.Host !== undefined) return { kind: 'host', name: p.Host };
  if (p.Cluster !== undefined) return { kind: 'cluster', name: p.Cluster };
  return { kind: 'partition', name: p.Partition as string };
}

const suspendSchema = z.strictObject({
  ...scopeShape,
  Until: timeParam.optional(),
  DurationMinutes: intParam(1, 525_600).optional(),
  Reason: textParam.optional(),
})
  .refine((p) => countScopes(p) > 0, { path: ['Host'], ...coded('MissingParameter', 'a scope is required', { parameter: 'Host, Cluster or Partition' }) })
  .refine((p) => countScopes(p) <= 1, oneScope)
  .refine((p) => !(p.Until !== undefined && p.DurationMinutes !== undefined), {
    path: ['DurationMinutes'], ...coded('InvalidParameterCombination', 'Give Until or DurationMinutes, not both'),
  });

const resumeSchema = z.strictObject(scopeShape)
  .refine((p) => countScopes(p) > 0, { path: ['Host'], ...coded('MissingParameter', 'a scope is required', { parameter: 'Host, Cluster or Partition' }) })
  .refine((p) => countScopes(p) <= 1, oneScope);

type SuspendInput = Readonly<z.infer<typeof suspendSchema>>;
type ResumeInput = Readonly<z.infer<typeof resumeSchema>>;

export function parseSuspendHA(params: ParamMap): SuspendInput {
  return parseActionParams(suspendSchema, params);
}

export function parseResumeHA(params: ParamMap): ResumeInput {
  return parseActionParams(resumeSchema, params);
}

export const suspendHA = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseSuspendHA,
  async run(p: SuspendInput, ctx: ActionContext): Promise<XmlObject> {
    const until = p.Until ?? (p.DurationMinutes !== undefined ? ctx.clock.now() + p.DurationMinutes * 60_000 : null);
    const s = await requireHa(ctx).suspend(scopeOf(p), until, p.Reason ?? 'suspended by an operator', operatorOf(ctx));
    ctx.logger.info({ scope: s.key, until: iso(s.until), by: s.by }, 'HA automation suspended');
    return { scope: s.key, until: iso(s.until), reason: s.reason, by: s.by };
  },
});

export const resumeHA = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseResumeHA,
  async run(p: ResumeInput, ctx: ActionContext): Promise<XmlObject> {
    const r = await requireHa(ctx).resume(scopeOf(p), operatorOf(ctx));
    ctx.logger.info({ scope: r.key, wasSuspended: r.wasSuspended }, 'HA automation resumed');
    return { scope: r.key, wasSuspended: r.wasSuspended };
  },
});
