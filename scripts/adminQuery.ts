/**
 * Signed admin requests to a CLC from outside, and polling for a condition: what the benches that run
 * a whole cloud (bench/) and the scale check (scripts/scaleCheck.ts) do to it. Tooling: its errors go
 * to the developer's terminal, never to a client.
 */
import { join } from 'node:path';
import xml2js from 'xml2js';
import { readCredentialsFile, type Credentials } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';

export type Doc = Record<string, unknown>;
export type AdminQuery = (params: Record<string, string>) => Promise<Doc>;

/** `<set><item/>...</set>` as xml2js leaves it. */
export const items = (v: unknown): Doc[] => (v === undefined || v === '' ? [] : Array.isArray(v) ? v as Doc[] : [v as Doc]);

/** The admin credentials file the CLC of a cloud in `baseDir` writes at its first start. */
export const adminCredentialsFile = (baseDir: string): string => join(baseDir, 'clc', 'admin.credentials');

/** Signed AWS-Query requests to the CLC at `url`; an answer other than 200 throws, naming `label`. */
export function adminQuery(label: string, baseDir: string, url: string): AdminQuery {
  let creds: Credentials | undefined;
  return async (params) => {
    creds ??= await readCredentialsFile(adminCredentialsFile(baseDir));
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
    // A read reset on a kept-alive socket (the server closed it as the request went out) is sent once more on a new one.
    const send = () => fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    const res = await send().catch((e: unknown) => {
      const reset = (e as { cause?: { code?: string } }).cause?.code === 'ECONNRESET';
      if (reset && /^Describe/.test(params.Action ?? '')) return send();
      throw e;
    });
    const doc = await xml2js.parseStringPromise(await res.text(), { explicitArray: false }) as Doc;
    const body = Object.values(doc)[0] as Doc;
    if (res.status !== 200) throw new Error(`${label}: ${params.Action} answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  };
}

/** Until `look` answers, polled every `everyMs`, within `limitMs` (generous: the machine is shared). */
export async function until<T>(label: string, what: string, look: () => Promise<T | undefined>, everyMs: number, limitMs = 180_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${label}: ${what} not within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
