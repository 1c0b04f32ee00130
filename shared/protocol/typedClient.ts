/** Typed calls over a WireTransport: validates what goes out and what comes back against the contract. */
import type { z } from 'zod';
import { WireErrors } from '../wire/errors.js';
import type { CallOptions, WireTransport } from '../wire/transport.js';
import type { WireObject } from '../wire/xmlCodec.js';

interface OpSpec { readonly request: z.ZodType; readonly response: z.ZodType }

export class TypedClient<Ops extends Record<string, OpSpec>> {
  constructor(private readonly transport: WireTransport, private readonly ops: Ops) {}

  async call<O extends keyof Ops & string>(
    endpoint: string, op: O, req: z.infer<Ops[O]['request']>, opts?: CallOptions,
  ): Promise<z.infer<Ops[O]['response']>> {
    const spec = this.ops[op] as OpSpec;
    const checked = spec.request.safeParse(req);
    if (!checked.success) {
      // Our own request breaks the contract: a bug on this side, reported as a coded error.
      const issue = checked.error.issues[0];
      throw WireErrors.make('InvalidParameter', { field: issue?.path.join('.') || '(body)', detail: issue?.message ?? 'invalid request' });
    }
    const out = checked.data as WireObject;
    const raw = await this.transport.call(endpoint, op, out, opts);
    const r = spec.response.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw WireErrors.make('PeerProtocolError', {
        peer: endpoint, operation: op, detail: `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid response'}`,
      });
    }
    return r.data as z.infer<Ops[O]['response']>;
  }
}
