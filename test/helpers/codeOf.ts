import { FerryError } from '../../shared/errors/registry.js';

/** The coded error a promise rejects with ('no error' when it resolves): one line per expectation. */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `uncoded: ${String(e)}`;
  }
  return 'no error';
}

/** The code of a failed wire call: the remote code of a <Fault>, else the transport's own. */
export function wireFaultOf(e: unknown): { code: string; message: string } {
  if (!(e instanceof FerryError)) return { code: 'not a FerryError', message: String(e) };
  return e.code === 'RemoteFault' ? { code: String(e.fields.remoteCode), message: String(e.fields.remoteMessage) } : { code: e.code, message: e.message };
}
