/**
 * The euca-* commands' one client: sends AWS-Query requests (form POST) to EC2_URL and hands back
 * the parsed XML response, or throws CloudError / ConnectionFailed / UnexpectedResponse.
 */
import xml2js from 'xml2js';
import { CloudError, ConnectionFailed, UnexpectedResponse } from './failures.js';

export const DEFAULT_EC2_URL = 'http://127.0.0.1:8773/services/Eucalyptus';
export const API_VERSION = '2013-02-01';
/** A RunInstances waits for every NC to create its domain, so allow well beyond the CLC's CC timeout. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export interface QueryClientOptions {
  readonly url: string;
  readonly accessKey: string | undefined;
  /** Held for SigV4 signing, which a later change adds; never sent. */
  readonly secretKey: string | undefined;
  readonly timeoutMs: number;
}

/** euca2ools' environment: EC2_URL, EC2_ACCESS_KEY, EC2_SECRET_KEY; `--url` wins over EC2_URL. */
export function clientOptionsFromEnv(env: Readonly<Record<string, string | undefined>>, url?: string): QueryClientOptions {
  return {
    url: url ?? env.EC2_URL ?? DEFAULT_EC2_URL,
    accessKey: env.EC2_ACCESS_KEY,
    secretKey: env.EC2_SECRET_KEY,
    timeoutMs: DEFAULT_TIMEOUT_MS,
  };
}

export type XmlDoc = Record<string, unknown>;

function connectionReason(e: unknown): string {
  const err = e as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (err?.name === 'TimeoutError') return 'no answer in time';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

export class QueryClient {
  constructor(private readonly opts: QueryClientOptions) {}

  /** Calls `action` and returns the children of its `<{Action}Response>` element. */
  async call(action: string, params: Readonly<Record<string, string>> = {}): Promise<XmlDoc> {
    const form = new URLSearchParams({ Action: action, Version: API_VERSION, ...params });
    if (this.opts.accessKey !== undefined) form.set('AWSAccessKeyId', this.opts.accessKey);
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.opts.url, { method: 'POST', body: form, signal: AbortSignal.timeout(this.opts.timeoutMs) });
      text = await res.text();
    } catch (e) {
      throw new ConnectionFailed(this.opts.url, connectionReason(e));
    }
    let doc: XmlDoc;
    try {
      doc = (await xml2js.parseStringPromise(text, { explicitArray: false, ignoreAttrs: true })) as XmlDoc;
    } catch {
      throw new UnexpectedResponse(this.opts.url, `HTTP ${res.status}, not XML`);
    }
    const errors = ((doc?.Response as XmlDoc | undefined)?.Errors as XmlDoc | undefined)?.Error;
    const first = (Array.isArray(errors) ? errors[0] : errors) as { Code?: unknown; Message?: unknown } | undefined;
    if (first && typeof first.Code === 'string') throw new CloudError(first.Code, typeof first.Message === 'string' ? first.Message : '', res.status);
    const body = doc?.[`${action}Response`];
    if (!res.ok || body === undefined) throw new UnexpectedResponse(this.opts.url, `HTTP ${res.status} without a ${action}Response`);
    return typeof body === 'object' && body !== null ? (body as XmlDoc) : {};
  }
}
