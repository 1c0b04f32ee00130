/**
 * The euca-* commands' one client: sends AWS-Query requests (form POST), signed with SigV4 when it
 * has keys, to EC2_URL and hands back the parsed XML response, or throws CloudError /
 * ConnectionFailed / UnexpectedResponse.
 */
import xml2js from 'xml2js';
import type { Credentials } from '../../shared/auth/credentialsFile.js';
import { signQuery } from '../../shared/auth/sign.js';
import { CloudError, ConnectionFailed, UnexpectedResponse } from './failures.js';

export { DEFAULT_EC2_URL } from './clientCredentials.js';
export const API_VERSION = '2013-02-01';
/** A RunInstances waits for every NC to create its domain, so allow well beyond the CLC's CC timeout. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export interface QueryClientOptions {
  readonly url: string;
  /** Undefined: requests go unsigned. */
  readonly credentials: Credentials | undefined;
  readonly timeoutMs: number;
  /** The signing time; the wall clock unless given. */
  readonly now?: () => number;
}

export type XmlDoc = Record<string, unknown>;

const NO_CREDENTIALS_HINT = ' (this command had no credentials: set EC2_ACCESS_KEY and EC2_SECRET_KEY, or pass --credentials FILE, e.g. <state-dir>/admin.credentials of the CLC)';

function connectionReason(e: unknown): string {
  const err = e as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (err?.name === 'TimeoutError') return 'no answer in time';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

export class QueryClient {
  constructor(private readonly opts: QueryClientOptions) {}

  private request(url: string, params: Record<string, string>): { headers: Record<string, string>; body: string } {
    const creds = this.opts.credentials;
    if (creds === undefined) return { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body: new URLSearchParams(params).toString() };
    return signQuery(params, { ...creds, url, now: (this.opts.now ?? Date.now)() });
  }

  /**
   * Calls `action` and returns the children of its `<{Action}Response>` element. A CLC replica that
   * does not lead answers NotLeader with the leader's URL (X-Ferry-Leader): the call is sent there, once.
   */
  call(action: string, params: Readonly<Record<string, string>> = {}): Promise<XmlDoc> {
    return this.callAt(this.opts.url, action, params, true);
  }

  private async callAt(url: string, action: string, params: Readonly<Record<string, string>>, followLeader: boolean): Promise<XmlDoc> {
    const { headers, body } = this.request(url, { Action: action, Version: API_VERSION, ...params });
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs) });
      text = await res.text();
    } catch (e) {
      throw new ConnectionFailed(url, connectionReason(e));
    }
    let doc: XmlDoc;
    try {
      doc = (await xml2js.parseStringPromise(text, { explicitArray: false, ignoreAttrs: true })) as XmlDoc;
    } catch {
      throw new UnexpectedResponse(url, `HTTP ${res.status}, not XML`);
    }
    const errors = ((doc?.Response as XmlDoc | undefined)?.Errors as XmlDoc | undefined)?.Error;
    const first = (Array.isArray(errors) ? errors[0] : errors) as { Code?: unknown; Message?: unknown } | undefined;
    if (first && typeof first.Code === 'string') {
      const leader = first.Code === 'NotLeader' && followLeader ? leaderTarget(url, res.headers.get('x-ferry-leader')) : undefined;
      if (leader !== undefined) return this.callAt(leader, action, params, false);
      const message = typeof first.Message === 'string' ? first.Message : '';
      throw new CloudError(first.Code, first.Code === 'AuthFailure' && this.opts.credentials === undefined ? message + NO_CREDENTIALS_HINT : message, res.status);
    }
    const reply = doc?.[`${action}Response`];
    if (!res.ok || reply === undefined) throw new UnexpectedResponse(url, `HTTP ${res.status} without a ${action}Response`);
    return typeof reply === 'object' && reply !== null ? (reply as XmlDoc) : {};
  }
}

/** The leader's origin (the X-Ferry-Leader header) with this request's path; undefined when it is not an http(s) URL or names this one. */
export function leaderTarget(url: string, header: string | null): string | undefined {
  if (header === null) return undefined;
  let leader: URL;
  try {
    leader = new URL(header);
  } catch {
    return undefined;
  }
  if (leader.protocol !== 'http:' && leader.protocol !== 'https:') return undefined;
  const here = new URL(url);
  if (leader.origin === here.origin) return undefined;
  return new URL(here.pathname + here.search, leader.origin).toString();
}
