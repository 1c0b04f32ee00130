/**
 * FenceHost: an operator fences a host now (DisableService, then power off), or retries a fence that
 * needs an operator. ConfirmHostFenced: an operator vouches a host being fenced is off (a dead BMC);
 * its instances may then restart elsewhere. Both go through the HA runner like any event; a host
 * whose state does not allow it is IncorrectHostHAState, naming the state.
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa } from './haCommon.js';

const schema = z.strictObject({ Host: hostSchema });
type Input = Readonly<z.infer<typeof schema>>;

export function parseFenceParams(params: ParamMap): Input {
  return parseActionParams(schema, params);
}

export const fenceHost = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseFenceParams,
  async run(p: Input, ctx: ActionContext): Promise<XmlObject> {
    const view = await requireHa(ctx).fenceHost(p.Host, operatorOf(ctx));
    ctx.logger.warn({ host: p.Host, by: operatorOf(ctx), state: view.record.state }, 'FenceHost by an operator');
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
