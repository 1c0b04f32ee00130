/** Server side of the contract: each handler receives a validated request and must return a valid response. */
import type { z } from 'zod';
import { parseBody } from '../wire/params.js';
import { WireErrors } from '../wire/errors.js';
import type { WireContext, WireHandlers } from '../wire/transport.js';
import type { WireObject } from '../wire/xmlCodec.js';

interface OpSpec { readonly request: z.ZodType; readonly response: z.ZodType }

export type TypedImpl<Ops extends Record<string, OpSpec>> = {
  [O in keyof Ops]: (req: z.infer<Ops[O]['request']>, ctx: WireContext) => Promise<z.infer<Ops[O]['response']>>;
};

export function typedHandlers<Ops extends Record<string, OpSpec>>(ops: Ops, impl: TypedImpl<Ops>): WireHandlers {
  const handlers: Record<string, (body: WireObject, ctx: WireContext) => Promise<WireObject>> = {};
  for (const op of Object.keys(ops) as (keyof Ops & string)[]) {
    const spec = ops[op] as OpSpec;
    const fn = impl[op];
    handlers[op] = async (body, ctx) => {
      const req = parseBody(spec.request, body) as z.infer<Ops[typeof op]["request"]>;
      const res = await fn(req, ctx);
      const checked = spec.response.safeParse(res);
      // A response that breaks the contract is our bug, not the caller's: report it as such.
      if (!checked.success) throw WireErrors.make('InternalError', { detail: `${op} built an invalid response: ${checked.error.issues[0]?.message}` });
      return checked.data as WireObject;
    };
  }
  return Object.freeze(handlers);
}
