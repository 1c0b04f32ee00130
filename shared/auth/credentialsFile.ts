/**
 * The credentials file, in euca2ools' `eucarc` shape so it can also be `source`d by a shell:
 *   export EC2_URL=http://127.0.0.1:8773/services/Eucalyptus
 *   export EC2_ACCESS_KEY=AKI...
 *   export EC2_SECRET_KEY=...
 * The CLC writes it (0600) for its admin at first start; the CLI reads it when EC2_* are unset.
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

export function formatCredentialsFile(c: CredentialsFile, comment: string): string {
  const lines = [...comment.split('\n').map((l) => `# ${l}`)];
  if (c.url !== undefined) lines.push(`export EC2_URL=${c.url}`);
  lines.push(`export EC2_ACCESS_KEY=${c.accessKey}`, `export EC2_SECRET_KEY=${c.secretKey}`, '');
  return lines.join('\n');
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
