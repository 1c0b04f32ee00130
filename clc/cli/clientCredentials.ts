/**
 * Where the euca-* commands get their keys and URL, in euca2ools' order: EC2_ACCESS_KEY and
 * EC2_SECRET_KEY from the environment; else a credentials file (--credentials, else
 * $FERRY_CREDENTIALS, else the demo cloud's `.ferry-demo/clc/admin.credentials` under the repo root,
 * so the first command after `scripts/demo.sh` just works). `--url` wins over EC2_URL, which wins
 * over the file's EC2_URL.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readCredentialsFile, type Credentials } from '../../shared/auth/credentialsFile.js';
import { UsageError } from './failures.js';

export const DEFAULT_EC2_URL = 'http://127.0.0.1:8773/services/Eucalyptus';

/** The nearest directory at or above `from` holding package.json (the repo root, from src or dist). */
export function findRepoRoot(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The demo cloud's admin credentials file, when this CLI runs from a checkout. */
export function defaultCredentialsPath(): string | undefined {
  const root = findRepoRoot(import.meta.dirname);
  return root === undefined ? undefined : join(root, '.ferry-demo', 'clc', 'admin.credentials');
}

export interface ResolvedClient {
  readonly url: string;
  /** Undefined: requests go unsigned (only a CLC started with --auth none accepts them). */
  readonly credentials: Credentials | undefined;
  /** Where the keys came from, for error hints (never the keys themselves). */
  readonly source: string;
}

export interface ResolveOptions {
  readonly url?: string;
  readonly credentialsPath?: string;
  /** Overrides the demo file's path (tests). */
  readonly defaultPath?: string | undefined;
}

export async function resolveClient(env: Readonly<Record<string, string | undefined>>, opts: ResolveOptions = {}): Promise<ResolvedClient> {
  const accessKey = env.EC2_ACCESS_KEY;
  const secretKey = env.EC2_SECRET_KEY;
  const envUrl = opts.url ?? env.EC2_URL;
  if (accessKey !== undefined && accessKey !== '' && secretKey !== undefined && secretKey !== '') {
    return { url: envUrl ?? DEFAULT_EC2_URL, credentials: { accessKey, secretKey }, source: 'EC2_ACCESS_KEY/EC2_SECRET_KEY' };
  }
  if ((accessKey ?? '') !== '' || (secretKey ?? '') !== '') {
    throw new UsageError(`${accessKey ? 'EC2_SECRET_KEY' : 'EC2_ACCESS_KEY'} is not set; set both EC2_ACCESS_KEY and EC2_SECRET_KEY, or neither to use a credentials file`);
  }
  const explicit = opts.credentialsPath ?? env.FERRY_CREDENTIALS;
  const path = explicit ?? ('defaultPath' in opts ? opts.defaultPath : defaultCredentialsPath());
  // A file named by the user must exist; the demo's default may simply not have been created yet.
  if (path === undefined || (explicit === undefined && !existsSync(path))) {
    return { url: envUrl ?? DEFAULT_EC2_URL, credentials: undefined, source: 'none' };
  }
  const file = await readCredentialsFile(path);
  return { url: envUrl ?? file.url ?? DEFAULT_EC2_URL, credentials: { accessKey: file.accessKey, secretKey: file.secretKey }, source: path };
}
