/**
 * CompleteHostRemediation (issue 15): the external remediator (or an operator) reports that the
 * remediation it was handed for a host is done (`Result=succeeded`: HA then re-checks the host's
 * health, Cluster API's MachineHealthCheck re-evaluating) or failed (HA escalates to its own fence,
 * through the storm guard). Refused, changing nothing, when the host has no remediation in flight
 * (IncorrectHostHAState) or the id is not the one in flight (RemediationIdMismatch: a stale report).
 */
import { z } from 'zod';
import { hostSchema } from '../../../shared/protocol/common.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa, textParam } from './haCommon.js';

const schema = z.strictObject({
  Host: hostSchema,
  RemediationId: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'expected the remediationId HA handed out (letters, digits, ".", "_", "-")'),
  Result: z.string().pipe(z.enum(['succeeded', 'failed'])),
  Message: textParam.optional(),
});
type Input = Readonly<z.infer<typeof schema>>;

export function parseCompleteHostRemediation(params: ParamMap): Input {
  return parseActionParams(schema, params);
}

export const completeHostRemediation = defineAction({
  namespace: EUCA_NAMESPACE,
  parse: parseCompleteHostRemediation,
  async run(p: Input, ctx: ActionContext): Promise<XmlObject> {
    const view = await requireHa(ctx).completeRemediation(p.Host, p.RemediationId, p.Result, p.Message ?? '', operatorOf(ctx));
    ctx.logger.info({ host: p.Host, remediationId: p.RemediationId, result: p.Result, by: operatorOf(ctx), state: view.record.state }, 'CompleteHostRemediation');
    return { host: hostHaItem(view) };
  },
});
