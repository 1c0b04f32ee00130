/**
 * The credentials file, in Eucalyptus's `eucarc` shape so it can also be `source`d by a shell:
 *   export EC2_URL=http://127.0.0.1:8773/services/Eucalyptus
 *   export EC2_ACCESS_KEY=AKI...
 *   export EC2_SECRET_KEY=...
 * followed by what the other tools read (toolExports): the AWS SDKs and CLI and euca2ools read
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and need a region; Eucalyptus 4's admin tools find
 * their service-management endpoint in EUCA_BOOTSTRAP_URL. The CLC writes it (0600) for its admin
 * at first start; Ferry's CLI reads it when EC2_* are unset.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

export interface Credentials {
  readonly accessKey: string;
  readonly secretKey: string;
}

export interface CredentialsFile extends Credentials {
  readonly url: string | undefined;
}

/** A credentials file that cannot be read or understood; the message names the file, never a key. */
export class CredentialsFileError extends Error {
  constructor(readonly path: string, detail: string) {
    super(`credentials file ${path}: ${detail}`);
    this.name = 'CredentialsFileError';
  }
}

/** `AKI` and 17 more: 20 characters, as Eucalyptus's access key ids. */
export const ACCESS_KEY_PATTERN = /^AKI[A-Z0-9]{17}$/;
/** 40 characters of the base64 alphabet, as AWS and Eucalyptus secret keys. */
export const SECRET_KEY_PATTERN = /^[A-Za-z0-9+/]{40}$/;

const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const BASE64ISH = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** `n` characters of `alphabet` from `random` bytes (rejection sampling, so no character is likelier). */
function randomString(alphabet: string, n: number, random: (size: number) => Buffer): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < n) {
    for (const b of random(n * 2)) {
      if (b < limit && out.length < n) out += alphabet[b % alphabet.length] as string;
    }
  }
  return out;
}

/** A fresh key pair; `random` is injectable so tests are deterministic. */
export function generateCredentials(random: (size: number) => Buffer = randomBytes): Credentials {
  return { accessKey: `AKI${randomString(UPPER_ALNUM, 17, random)}`, secretKey: randomString(BASE64ISH, 40, random) };
}

/** The region the CLC answers DescribeRegions with, and what clients that need one should sign for. */
export const CLOUD_REGION = 'eucalyptus';
/** Eucalyptus 4's service-management path (euserv-*), beside EC2_URL's. */
export const BOOTSTRAP_PATH = '/services/Empyrean';

/** The variables other tools read, in the order written: name → value. */
export function toolExports(c: CredentialsFile): [string, string][] {
  const out: [string, string][] = [];
  if (c.url !== undefined) out.push(['EUCA_BOOTSTRAP_URL', `${new URL(c.url).origin}${BOOTSTRAP_PATH}`]);
  out.push(['AWS_DEFAULT_REGION', CLOUD_REGION], ['AWS_ACCESS_KEY_ID', c.accessKey], ['AWS_SECRET_ACCESS_KEY', c.secretKey]);
  return out;
}

export function formatCredentialsFile(c: CredentialsFile, comment: string): string {
  const lines = [...comment.split('\n').map((l) => `# ${l}`)];
  if (c.url !== undefined) lines.push(`export EC2_URL=${c.url}`);
  lines.push(`export EC2_ACCESS_KEY=${c.accessKey}`, `export EC2_SECRET_KEY=${c.secretKey}`);
  lines.push(...toolExports(c).map(([k, v]) => `export ${k}=${v}`), '');
  return lines.join('\n');
}

/** The names a file written before toolExports lacks (none when every one is there). */
export function missingToolExports(text: string, c: CredentialsFile): [string, string][] {
  const named = new Set([...text.matchAll(/^\s*(?:export\s+)?([A-Z0-9_]+)=/gm)].map((m) => m[1]));
  return toolExports(c).filter(([k]) => !named.has(k));
}

/** Reads `NAME=value` lines (optionally `export`ed, optionally quoted); comments and blank lines are skipped. */
export function parseCredentialsFile(text: string, path: string): CredentialsFile {
  const vars = new Map<string, string>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line);
    if (!m) throw new CredentialsFileError(path, `line ${i + 1} is not NAME=value`);
    vars.set(m[1] as string, (m[2] as string).replace(/^(['"])(.*)\1$/, '$2'));
  }
  const accessKey = vars.get('EC2_ACCESS_KEY');
  const secretKey = vars.get('EC2_SECRET_KEY');
  if (accessKey === undefined || accessKey === '') throw new CredentialsFileError(path, 'EC2_ACCESS_KEY is missing');
  if (secretKey === undefined || secretKey === '') throw new CredentialsFileError(path, 'EC2_SECRET_KEY is missing');
  return { accessKey, secretKey, url: vars.get('EC2_URL') };
}

export async function readCredentialsFile(path: string): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new CredentialsFileError(path, (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `cannot be read (${(e as Error).message})`);
  }
  return parseCredentialsFile(text, path);
}
