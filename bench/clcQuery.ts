/** The bench's admin client of a real CLC: signed Query API calls with the cloud's admin credentials, answers as plain objects. */
import { join } from 'node:path';
import xml2js from 'xml2js';
import { readCredentialsFile, type Credentials } from '../shared/auth/credentialsFile.js';
import { signQuery } from '../shared/auth/sign.js';

export type Doc = Record<string, unknown>;

/** An XML list as xml2js gives it (absent, one object, or many) as an array. */
export const items = (v: unknown): Doc[] => (v === undefined || v === '' ? [] : Array.isArray(v) ? v as Doc[] : [v as Doc]);

/** A query function for the CLC at `url` whose state dir is `clcStateDir`; `what` names the bench in its errors. */
export function clcQuery(url: string, clcStateDir: string, what: string): (params: Record<string, string>) => Promise<Doc> {
  let creds: Credentials | undefined;
  return async (params) => {
    creds ??= await readCredentialsFile(join(clcStateDir, 'admin.credentials'));
    const signed = signQuery({ Version: '2013-02-01', ...params }, { ...creds, url, now: Date.now() });
    const res = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
    const doc = await xml2js.parseStringPromise(await res.text(), { explicitArray: false }) as Doc;
    const body = Object.values(doc)[0] as Doc;
    // Bench tooling: the error goes to the developer's terminal.
    if (res.status !== 200) throw new Error(`${what} bench: ${params.Action} answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  };
}

/** Polls `look` every `everyMs` until it gives a value; throws naming `what` after `limitMs`. */
export async function until<T>(what: string, look: () => Promise<T | undefined>, everyMs: number, limitMs: number): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await look();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`bench: ${what} within ${limitMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
