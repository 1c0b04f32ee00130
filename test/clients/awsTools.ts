/**
 * Runs the real AWS tools from Debian against a test cloud, as a new administrator would: boto3
 * (`python3-boto3`, through test/clients/boto3_steps.py) and the aws CLI (`awscli`), always the
 * Debian ones by absolute path (PATH may hold a pyenv python and aws), with default settings.
 *
 * Their environment is clean: the variables a shell gets by sourcing the CLC's admin.credentials,
 * a HOME of their own (so no ~/.aws config or credentials leak in), PATH=/usr/bin:/bin, and nothing
 * else of the parent's (no AWS_PROFILE, AWS_CA_BUNDLE, AWS_RETRY_MODE, ...). The endpoint is given
 * per call (`endpoint_url=` / `--endpoint-url`), as the tools have no other way to find a
 * non-AWS cloud.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PYTHON = '/usr/bin/python3';
export const AWS_CLI = '/usr/bin/aws';
const BOTO3_STEPS = resolve(import.meta.dirname, 'boto3_steps.py');

/** The names sourcing admin.credentials may set that the clients read. */
const CREDENTIAL_NAMES = [
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_DEFAULT_REGION', 'EUCA_BOOTSTRAP_URL', 'EC2_URL', 'EC2_ACCESS_KEY', 'EC2_SECRET_KEY',
] as const;
export type CredentialName = (typeof CREDENTIAL_NAMES)[number];

/** What `source admin.credentials` exports, read by a real shell with an empty environment. */
export async function sourceCredentials(file: string): Promise<Partial<Record<CredentialName, string>>> {
  const { stdout } = await run('/usr/bin/env', ['-i', 'PATH=/usr/bin:/bin', '/bin/bash', '--noprofile', '--norc', '-c', '. "$1" && /usr/bin/env -0', '_', file]);
  const out: Partial<Record<CredentialName, string>> = {};
  for (const entry of stdout.split('\0')) {
    const eq = entry.indexOf('=');
    const name = entry.slice(0, eq) as CredentialName;
    if (eq > 0 && CREDENTIAL_NAMES.includes(name)) out[name] = entry.slice(eq + 1);
  }
  return out;
}

/**
 * The environment the AWS tools run in. Keys come from AWS_* when the file exports them (issue 14
 * asks it to), else from its EC2_* (so the rest of the suite still runs and only the export test
 * fails); the region from AWS_DEFAULT_REGION, else `eucalyptus`.
 */
export function awsToolEnv(sourced: Partial<Record<CredentialName, string>>, home: string): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  const accessKey = sourced.AWS_ACCESS_KEY_ID ?? sourced.EC2_ACCESS_KEY;
  const secretKey = sourced.AWS_SECRET_ACCESS_KEY ?? sourced.EC2_SECRET_KEY;
  if (accessKey === undefined || secretKey === undefined) throw new Error('admin.credentials exports no access key');
  return {
    HOME: home, PATH: '/usr/bin:/bin', LANG: 'C.UTF-8',
    AWS_ACCESS_KEY_ID: accessKey, AWS_SECRET_ACCESS_KEY: secretKey, AWS_DEFAULT_REGION: sourced.AWS_DEFAULT_REGION ?? 'eucalyptus',
  };
}

/** One HTTP attempt botocore made, as its before-send / response-received events saw it. */
export interface Boto3Attempt {
  readonly authorization: string;
  readonly amzDate: string;
  /** The ClientToken in the request body, if any (botocore fills one in for RunInstances). */
  readonly clientToken: string | null;
  readonly status: number | null;
  /** The error code botocore parsed from the answer (null on success). */
  readonly code: string | null;
}

export interface Boto3Error {
  readonly type: string;
  readonly code: string | null;
  readonly message?: string;
  readonly status?: number;
  readonly retryAttempts?: number;
  readonly text: string;
}

export interface Boto3Result {
  readonly response?: any;
  readonly pages?: any[];
  /** A resource action's result, resources given as their identifiers ({ id } for an Instance). */
  readonly resources?: any;
  /** A resource attribute, after load(). */
  readonly value?: any;
  readonly waited?: boolean;
  readonly waiterError?: { readonly reason: string; readonly lastResponse: any };
  readonly error?: Boto3Error;
  readonly attempts: Boto3Attempt[];
  readonly seconds: number;
}

export type Boto3Step =
  | { readonly call: string; readonly args?: Record<string, unknown> }
  | { readonly paginate: string; readonly args?: Record<string, unknown>; readonly config?: Record<string, unknown> }
  | { readonly wait: string; readonly args?: Record<string, unknown>; readonly config?: Record<string, unknown> }
  /** boto3.resource('ec2')'s action, or with `on` the action of one resource (['Instance', id]). */
  | { readonly resource: string; readonly on?: readonly [string, string]; readonly args?: Record<string, unknown> }
  /** One resource's attribute after load() (Instance.tags). */
  | { readonly attribute: string; readonly on: readonly [string, string] };

/** Runs the steps in one boto3 client (one Python process); one result per step. */
export function boto3(env: NodeJS.ProcessEnv, endpoint: string, steps: readonly Boto3Step[]): Promise<Boto3Result[]> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(PYTHON, [BOTO3_STEPS, endpoint], { env, cwd: env.HOME, stdio: ['pipe', 'pipe', 'pipe'], timeout: 170_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`boto3_steps.py exited ${code}: ${stderr}`));
        return;
      }
      try {
        resolveRun(JSON.parse(stdout) as Boto3Result[]);
      } catch (e) {
        reject(new Error(`boto3_steps.py printed no JSON (${(e as Error).message}): ${stdout}\n${stderr}`));
      }
    });
    child.stdin.end(JSON.stringify(steps));
  });
}

/** One boto3 step that must succeed; its response (pages for a paginator). */
export async function boto3Ok(env: NodeJS.ProcessEnv, endpoint: string, step: Boto3Step): Promise<any> {
  const [r] = await boto3(env, endpoint, [step]);
  if (r === undefined || r.error !== undefined || r.waiterError !== undefined) throw new Error(`boto3 ${JSON.stringify(step)} failed: ${JSON.stringify(r)}`);
  return r.response ?? r.pages ?? r.resources ?? r.value ?? r.waited;
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON when it is JSON (the default output format). */
  readonly json: any;
}

/** `aws ec2 ARGS --endpoint-url ENDPOINT`; exit code and output, never a throw for a non-zero exit. */
export async function awsCli(env: NodeJS.ProcessEnv, endpoint: string, args: readonly string[]): Promise<CliResult> {
  let code = 0;
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await run(AWS_CLI, ['ec2', ...args, '--endpoint-url', endpoint], { env, cwd: env.HOME, timeout: 170_000 }));
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof err.code !== 'number') throw e;
    code = err.code;
    stdout = err.stdout ?? '';
    stderr = err.stderr ?? '';
  }
  let json: any;
  try {
    json = stdout.trim() === '' ? undefined : JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** A fresh HOME for the tools under `baseDir`. */
export function toolHome(baseDir: string, name: string): string {
  const home = join(baseDir, name);
  mkdirSync(home, { recursive: true });
  return home;
}
