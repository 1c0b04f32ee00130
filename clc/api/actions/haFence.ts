/**
 * FenceHost: an operator fences a host now (DisableService, then power off), or retries a fence that
 * needs an operator. ConfirmHostFenced: an operator vouches a host being fenced is off (a dead BMC);
 * its instances may then restart elsewhere. Both go through the HA runner like any event; a host
 * whose state does not allow it is IncorrectHostHAState, naming the state. FenceHost of a host that
 * is up and healthy is HostHealthy unless `Force=true` (OpenStack's fencing blueprint).
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa } from './haCommon.js';

const schema = z.strictObject({ Host: hostSchema });
type Input = Readonly<z.infer<typeof schema>>;
const fenceSchema = z.strictObject({ Host: hostSchema, Force: boolParam.optional() });
type FenceInput = Readonly<z.infer<typeof fenceSchema>>;

export function parseFenceParams(params: ParamMap): Input {
  return parseActionParams(schema, params);
}

/** FenceHost's: `Force=true` fences a host that is up and healthy (refused as HostHealthy without it). */
export function parseFenceHostParams(params: ParamMap): FenceInput {
  return parseActionParams(fenceSchema, params);
}

export const fenceHost = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseFenceHostParams,
  async run(p: FenceInput, ctx: ActionContext): Promise<XmlObject> {
    const force = p.Force ?? false;
    const view = await requireHa(ctx).fenceHost(p.Host, operatorOf(ctx), force);
    ctx.logger.warn({ host: p.Host, by: operatorOf(ctx), force, state: view.record.state }, force ? 'FenceHost forced by an operator' : 'FenceHost by an operator');
    return { host: hostHaItem(view) };
  },
});

export const confirmHostFenced = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseFenceParams,
  async run(p: Input, ctx: ActionContext): Promise<XmlObject> {
    const view = await requireHa(ctx).confirmFenced(p.Host, operatorOf(ctx));
    ctx.logger.warn({ host: p.Host, by: operatorOf(ctx), state: view.record.state }, 'ConfirmHostFenced by an operator');
    return { host: hostHaItem(view) };
  },
});
