/** What the host-HA actions share: the facade, the operator's name, and their parameter schemas. */
import { z } from 'zod';
import { ClcErrors } from '../../core/errors.js';
import type { HaControl } from '../../ha/haControl.js';
import type { ActionContext } from '../action.js';

export function requireHa(ctx: ActionContext): HaControl {
  if (!ctx.ha) throw ClcErrors.make('ServiceUnavailable', { detail: 'host HA is not set up in this CLC' });
  return ctx.ha;
}

/** Who did it, as the event log records it. */
export const operatorOf = (ctx: ActionContext): string => ctx.principal.accessKeyId ?? (ctx.principal.isAdmin ? 'admin' : ctx.principal.accountId);

/** An ISO 8601 UTC time (`2013-06-01T12:00:00Z`, milliseconds optional), as epoch ms. */
export const timeParam = z.string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/, 'expected an ISO 8601 UTC time such as 2013-06-01T12:00:00Z')
  .transform((s) => Date.parse(s))
  .refine((n) => Number.isFinite(n), 'not a valid time');

/** One line of free text (a reason). */
export const textParam = z.string().min(1, 'must not be empty').max(500, 'must be at most 500 characters').regex(/^[^\r\n\0]*$/, 'must be one line');
