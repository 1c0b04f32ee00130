/**
 * The wire behaviour of requestbuilder, the library euca2ools 3.x and the Eucalyptus 4 admin tools
 * (euserv-*) are built on, rebuilt from its public source so a test can send what those Python 2
 * tools send (they cannot run here). Sources, by repository, commit and path:line:
 *   RB = boto/requestbuilder b4ff332 (/work/.mirror/boto+requestbuilder)
 *
 * - Parameters (AWSQueryRequest.flatten_params, RB request.py:294-370): dicts become `Parent.Key`,
 *   lists `Name.1`, `Name.2`...; a bool is sent as `true`/`false` (:341, so a store_true option the
 *   user did not give is sent as `false`, see eucaCommands.ts); a value that is None, '' or [] is
 *   left out, 0 is kept (:347, :365), and EMPTY is sent as an empty value (:349-350; euca2ools' tag
 *   arguments use it). Action and Version are added after flattening (:263-264).
 * - POST (every service class here has METHOD = 'POST'): the flattened parameters become the form
 *   body (RB request.py:274-276), which python-requests encodes with urllib.urlencode: quote_plus,
 *   so a space is `+` and only letters, digits and `_.-` stay as they are (Python 2's always-safe
 *   set, which has no `~`). The URL is the endpoint exactly as configured, trailing slash and all:
 *   AWSQueryRequest has no path, and BaseService.__get_url_for_path returns the endpoint itself
 *   (RB service.py:259-268); there is no query string.
 * - Headers: python-requests' session defaults `Accept-Encoding: gzip, deflate`, `Accept` (any type, star slash star),
 *   `Connection: keep-alive` (requests utils.default_headers), requestbuilder's own User-Agent
 *   (RB request.py:159) and `Host` = the endpoint's netloc (RB service.py:151); requests adds
 *   `Content-Type: application/x-www-form-urlencoded` and `Content-Length` for a form body; then
 *   HmacV4Auth adds `X-Amz-Content-SHA256` (hex SHA-256 of the body) and `X-Amz-Date`
 *   (RB auth/aws.py:426-429) and signs.
 * - Signature (HmacV4Auth, RB auth/aws.py:376-520): every header but `connection` and `user-agent`
 *   is signed (:478), so SignedHeaders is
 *   accept;accept-encoding;content-length;content-type;host;x-amz-content-sha256;x-amz-date.
 *   Canonical URI = the path quoted with `/~` safe (:459), canonical query from the URL (empty for
 *   a POST), header values stripped, scope = date/region/service NAME/aws4_request (:451), the
 *   key derived from `AWS4` + secret (:411). The region is the config file's region section name,
 *   else `undefined-<pid>` (add_fake_region_name, euca2ools util.py:169-181 and eucalyptus
 *   admin-tools eucalyptus_admin/util.py:31-33), since an URL from EC2_URL / EUCA_BOOTSTRAP_URL /
 *   -U carries no region (RB service.py:329-339).
 * - Retries: a 500 or 503 is sent again, re-signed, up to MAX_RETRIES = 2 more times after
 *   (random() + 1) * 2^(n-1) seconds (RB service.py:40, 197, 360-366); any other status >= 300 is
 *   the tool's AWSError (:223).
 * - Answers: a success is read with parse_listdelimited_aws_xml and the command's LIST_TAGS, the
 *   root element stripped (RB request.py:286-292); an error with parse_aws_xml: Response > Errors >
 *   Error > Code / Message, or, when the body is not XML, no code and the body as message
 *   (euca2ools exceptions.py:32-63, admin-tools eucalyptus_admin/exceptions.py:32-60).
 */
import { createHash, createHmac } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import { get, parseListDelimitedXml, XmlParseError, type ToolDict, type ToolValue } from './listDelimitedXml.js';

/** A requestbuilder service as one command uses it. */
export interface ToolService {
  /** The service class's NAME: the SigV4 scope's service ('ec2', 'bootstrap'). */
  readonly name: string;
  /** API_VERSION, sent as Version. */
  readonly apiVersion: string;
  /** The endpoint URL exactly as configured (a config file's `ec2-url`, EC2_URL, -U). */
  readonly endpoint: string;
  /** The config file's region section name, or undefined (then `undefined-<pid>`). */
  readonly region?: string;
}

/**
 * requestbuilder's EMPTY (RB __init__.py:44-47): a parameter sent with an empty value, where an empty
 * string is left out (flatten_params sends str(EMPTY), which is '', RB request.py:347-350).
 */
export const EMPTY: unique symbol = Symbol('requestbuilder.EMPTY');

/** A value a command puts in its params before flatten_params. */
export type ParamInput = string | number | boolean | null | undefined | typeof EMPTY | readonly ParamInput[] | { readonly [k: string]: ParamInput };

/** flatten_params: the pairs to send, in order. */
export function flattenParams(args: ParamInput, prefix?: string): [string, string][] {
  const out: [string, string][] = [];
  const add = (key: string, v: ParamInput): void => {
    if (Array.isArray(v) || (v !== null && typeof v === 'object')) out.push(...flattenParams(v, key));
    else if (typeof v === 'boolean') out.push([key, String(v)]);
    else if (typeof v === 'number') out.push([key, String(v)]);
    else if (typeof v === 'string' && v !== '') out.push([key, v]);
    else if (v === EMPTY) out.push([key, '']);
  };
  if (Array.isArray(args)) (args as readonly ParamInput[]).forEach((v, i) => add(prefix === undefined ? String(i + 1) : `${prefix}.${i + 1}`, v));
  else if (args !== null && typeof args === 'object') {
    for (const [k, v] of Object.entries(args as Record<string, ParamInput>)) add(prefix === undefined ? k : `${prefix}.${k}`, v);
  }
  return out;
}

/** Python 2 urllib.quote_plus: letters, digits and `_.-` kept, space `+`, the rest %XX of UTF-8. */
function quotePlus(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_.-]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Python 2 urllib.quote(s, safe): as quote_plus but space is %20 and `safe` is kept. */
function quote(s: string, safe: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_.-]/.test(c) || safe.includes(c)) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function pythonUrlencode(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now)) */
function amzDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

export interface Credentials {
  readonly accessKey: string;
  readonly secretKey: string;
}

/** What went on the wire, for a test to look at. */
export interface WireRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The form body's pairs, decoded. */
  readonly params: Readonly<Record<string, string>>;
}

export interface V4Input {
  readonly method: string;
  readonly url: URL;
  /** Every header to be sent, as named on the wire. */
  readonly headers: Readonly<Record<string, string>>;
  readonly payloadHash: string;
  /** X-Amz-Date, YYYYMMDDTHHMMSSZ. */
  readonly amzDate: string;
  readonly region: string;
  readonly service: string;
  readonly secretKey: string;
}

/** HmacV4Auth's canonical request, string to sign and signature (RB auth/aws.py:383-418, 455-485). */
export function hmacV4Signature(i: V4Input): { signedHeaders: string; scope: string; signature: string } {
  const scope = [i.amzDate.slice(0, 8), i.region, i.service, 'aws4_request'];
  const normalized = new Map<string, string>();
  for (const [k, v] of Object.entries(i.headers)) {
    if (!['connection', 'user-agent'].includes(k.toLowerCase())) normalized.set(k.toLowerCase().trim(), v.trim());
  }
  const names = [...normalized.keys()].sort();
  const query = [...new URLSearchParams(i.url.search)].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${quote(k, '~-_.')}=${quote(v, '~-_.')}`).join('&');
  const canonical = [
    i.method.toUpperCase(), quote(i.url.pathname || '/', '/~'), query,
    names.map((n) => `${n}:${normalized.get(n) as string}`).join('\n'), '', names.join(';'), i.payloadHash,
  ].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', i.amzDate, scope.join('/'), sha256Hex(canonical)].join('\n');
  let key: Buffer = Buffer.from(`AWS4${i.secretKey}`, 'utf8');
  for (const part of scope) key = hmac(key, part);
  return { signedHeaders: names.join(';'), scope: scope.join('/'), signature: createHmac('sha256', key).update(toSign).digest('hex') };
}

/** HmacV4Auth.apply_to_request on a prepared request: adds Host, X-Amz-Content-SHA256, X-Amz-Date, Authorization. */
export function signHmacV4(method: string, url: URL, headers: Record<string, string>, body: string, creds: Credentials, region: string, serviceName: string, now: Date): void {
  const payloadHash = sha256Hex(body);
  headers['Host'] = url.host;
  headers['X-Amz-Content-SHA256'] = payloadHash;
  headers['X-Amz-Date'] = amzDate(now);
  const v4 = hmacV4Signature({ method, url, headers, payloadHash, amzDate: headers['X-Amz-Date'], region, service: serviceName, secretKey: creds.secretKey });
  headers['Authorization'] = `AWS4-HMAC-SHA256 Credential=${creds.accessKey}/${v4.scope}, SignedHeaders=${v4.signedHeaders}, Signature=${v4.signature}`;
}

/** AWSError as the tools raise it: `format_for_cli()` is what the user sees after `<prog>: `. */
export class ToolServerError extends Error {
  constructor(readonly status: number, readonly code: string | undefined, readonly serverMessage: string | undefined, readonly body: string) {
    super(`error (${code ?? status}): ${serverMessage ?? ''}`);
    this.name = 'ToolServerError';
  }
}

async function toolServerError(status: number, body: string): Promise<ToolServerError> {
  try {
    const doc = await parseListDelimitedXml(body);
    let parsed: ToolValue | undefined = Object.values(doc)[0];
    if (get(parsed, 'Errors') !== undefined) parsed = get(parsed, 'Errors');
    if (get(parsed, 'Error') !== undefined) parsed = get(parsed, 'Error');
    const code = get(parsed, 'Code');
    const message = get(parsed, 'Message');
    return new ToolServerError(status, typeof code === 'string' && code !== '' ? code : undefined, typeof message === 'string' ? message : undefined, body);
  } catch (e) {
    if (e instanceof XmlParseError) return new ToolServerError(status, undefined, body, body);
    throw e;
  }
}

export interface ToolResponse {
  /** The parsed answer without its root element, as the command's main() returns it. */
  readonly result: ToolDict;
  /** Every attempt's request (more than one after a 500/503). */
  readonly sent: WireRequest[];
}

/** One tool process: its credentials, User-Agent and (like a requests.Session) keep-alive connections. */
export class RequestbuilderSession {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** What every request of this session sent, oldest first. */
  readonly history: WireRequest[] = [];

  constructor(
    private readonly creds: Credentials,
    private readonly userAgent: string,
    /** The pid add_fake_region_name puts in `undefined-<pid>`. */
    private readonly pid: number = process.pid,
  ) {}

  regionOf(service: ToolService): string {
    return service.region ?? `undefined-${this.pid}`;
  }

  /** AWSQueryRequest.send for `action` with the command's params and LIST_TAGS. */
  async send(service: ToolService, action: string, params: ParamInput, listTags: readonly string[] = []): Promise<ToolResponse> {
    const pairs = flattenParams(params);
    pairs.push(['Action', action], ['Version', service.apiVersion]);
    const body = pythonUrlencode(pairs);
    const url = new URL(service.endpoint);
    const sent: WireRequest[] = [];
    const maxTries = 3;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = {
        'User-Agent': this.userAgent, 'Accept-Encoding': 'gzip, deflate', Accept: '*/*', Connection: 'keep-alive',
        Host: url.host, 'Content-Length': String(Buffer.byteLength(body)), 'Content-Type': 'application/x-www-form-urlencoded',
      };
      signHmacV4('POST', url, headers, body, this.creds, this.regionOf(service), service.name, new Date());
      const wire: WireRequest = { method: 'POST', url: service.endpoint, headers, body, params: Object.fromEntries(pairs) };
      sent.push(wire);
      this.history.push(wire);
      const res = await this.post(url, headers, body);
      if ((res.status === 500 || res.status === 503) && attempt < maxTries) {
        await new Promise((r) => setTimeout(r, Math.min((Math.random() + 1) * 2 ** (attempt - 1), 15) * 1000));
        continue;
      }
      if (res.status >= 300) throw await toolServerError(res.status, res.body);
      const doc = await parseListDelimitedXml(res.body, listTags);
      const [root] = Object.values(doc);
      return { result: (root !== undefined && typeof root === 'object' && !Array.isArray(root) ? root : {}), sent };
    }
  }

  private post(url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({
        host: url.hostname, port: url.port || 80, method: 'POST', path: url.pathname + url.search, headers, agent: this.agent, setHost: false,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          // python-requests undoes the Content-Encoding it asked for (gzip, deflate).
          const raw = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          const decoded = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'deflate' ? inflateSync(raw) : raw;
          resolve({ status: res.statusCode ?? 0, body: decoded.toString('utf8') });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
