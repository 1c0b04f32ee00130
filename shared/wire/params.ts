/** Validates a decoded wire body against a zod schema once, at the edge (STYLE habit 7). */
import type { z } from 'zod';
import { WireErrors } from './errors.js';
import type { WireObject } from './xmlCodec.js';

export function parseBody<S extends z.ZodType>(schema: S, body: WireObject): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
  throw WireErrors.make('InvalidParameter', { field, detail: issue?.message ?? 'invalid' });
}
