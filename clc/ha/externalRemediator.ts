/**
 * The real external remediators (remediation.ts): a command run without a shell, or a webhook.
 * Each call settles by the job's deadline, whatever the other side does:
 *  - command: started = accepted (reported through `onAccepted`, so a CLC restart does not run it
 *    twice); exit 0 = done; any other exit, a failure to start, or the deadline (its process group is
 *    killed) = failed. Its output's last line is the detail, with the secret masked.
 *  - webhook: a 2xx = accepted (the remediator reports done through CompleteHostRemediation);
 *    a 4xx other than 408/429 = refused, failed at once; anything else (5xx, refused connection,
 *    no answer) is retried with back-off until the deadline.
 * Failures are HaErrors RemediationFailed (they reach the HA event log, never a client).
 */
import { spawn } from 'node:child_process';
import type { Clock } from '../../shared/clock.js';
import { HaErrors } from './errors.js';
import { redact, lastLine } from './power/fenceAgentProtocol.js';
import { remediationStdin, webhookBody, type RemediationConfig, type RemediationJob } from './remediation.js';

export interface RemediationOutcome {
  readonly outcome: 'accepted' | 'done';
  readonly detail: string;
}

/** The narrow interface the runner hands remediations to (STYLE habit 4). */
export interface ExternalRemediator {
  /** Resolves accepted or done, rejects when it failed; `onAccepted` may be called once before a later `done`. */
  remediate(job: RemediationJob, onAccepted: (detail: string) => void): Promise<RemediationOutcome>;
}

const MAX_OUTPUT = 64 * 1024;
/** Webhook retries: first after 500 ms, doubling, at most 30 s apart; one attempt waits at most 10 s. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;
const ATTEMPT_MAX_MS = 10_000;

const failed = (job: RemediationJob, detail: string) => HaErrors.make('RemediationFailed', { detail: `external remediation ${job.id} of ${job.host}: ${detail}` });

export function externalRemediator(cfg: RemediationConfig, secret: string, clock: Clock): ExternalRemediator {
  if (cfg.command) {
    const command = cfg.command;
    return { remediate: (job, onAccepted) => runCommand(command, secret, job, clock, onAccepted) };
  }
  if (cfg.webhook) {
    const url = cfg.webhook.url;
    return { remediate: (job) => postWebhook(url, secret, job, clock) };
  }
  return { remediate: (job) => Promise.reject(failed(job, 'no command or webhook is configured')) };
}

function runCommand(cmd: { path: string; args: readonly string[] }, secret: string, job: RemediationJob, clock: Clock, onAccepted: (detail: string) => void): Promise<RemediationOutcome> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let output = '';
    // Only PATH and the locale: the CLC's own environment is not the remediator's business.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8' };
    const child = spawn(cmd.path, [...cmd.args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      f();
    };
    const timer = clock.setTimer(Math.max(0, job.deadline - clock.now()), () => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      finish(() => reject(failed(job, `the command ${cmd.path} did not finish before the remediation timeout`)));
    });
    const collect = (b: Buffer) => {
      if (output.length < MAX_OUTPUT) output += b.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('spawn', () => onAccepted(`the command ${cmd.path} started (pid ${child.pid ?? '?'})`));
    child.on('error', (e: NodeJS.ErrnoException) => finish(() => reject(failed(job, `the command ${cmd.path} could not start: ${e.code ?? e.message}`))));
    child.stdin.on('error', () => {
      // The command exited before reading its stdin; its exit status tells what happened.
    });
    child.on('close', (code, signal) => {
      const said = lastLine(redact(output, secret));
      if (code === 0) finish(() => resolve({ outcome: 'done', detail: `the command ${cmd.path} exited 0: ${said}` }));
      else finish(() => reject(failed(job, `the command ${cmd.path} ${code === null ? `was killed by ${signal ?? 'a signal'}` : `exited ${code}`}: ${said}`)));
    });
    child.stdin.end(remediationStdin(job, secret));
  });
}

async function postWebhook(url: string, secret: string, job: RemediationJob, clock: Clock): Promise<RemediationOutcome> {
  const body = webhookBody(job);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': job.id };
  if (secret.length > 0) headers.authorization = `Bearer ${secret}`;
  let last = 'not tried';
  for (let attempt = 0; ; attempt++) {
    const left = job.deadline - clock.now();
    if (left <= 0) throw failed(job, `the webhook did not accept it before the remediation timeout (last: ${last})`);
    const abort = new AbortController();
    const timer = clock.setTimer(Math.min(ATTEMPT_MAX_MS, left), () => abort.abort());
    try {
      const r = await fetch(url, { method: 'POST', headers, body, signal: abort.signal, redirect: 'error' });
      const text = redact((await r.text()).slice(0, 300), secret);
      if (r.status >= 200 && r.status < 300) return { outcome: 'accepted', detail: `the webhook answered ${r.status}` };
      last = `HTTP ${r.status} ${text}`.trim();
      if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) throw failed(job, `the webhook refused it: ${last}`);
    } catch (e) {
      if (HaErrors.has((e as { code?: string }).code ?? '')) throw e;
      last = abort.signal.aborted ? 'no answer in time' : describeFetchError(e);
    } finally {
      timer.cancel();
    }
    const wait = Math.min(RETRY_FIRST_MS * 2 ** Math.min(attempt, 16), RETRY_MAX_MS, Math.max(0, job.deadline - clock.now()));
    await new Promise<void>((resolve) => clock.setTimer(wait, resolve));
  }
}

function describeFetchError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}
