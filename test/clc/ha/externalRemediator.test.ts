/**
 * The real external remediators (clc/ha/externalRemediator.ts) against a real command and a real
 * HTTP receiver on 127.0.71.0/24 (ports 18200-18209): what they are given (stdin key=value, the JSON
 * body, the secret never in argv or an error), how exits and answers are read, and that every call
 * settles by its deadline.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalRemediator } from '../../../clc/ha/externalRemediator.js';
import type { RemediationJob } from '../../../clc/ha/remediation.js';
import { systemClock } from '../../../shared/clock.js';

const SECRET = 'rem-s3cret-71';
const job = (deadlineMs = 30_000): RemediationJob => ({ host: '127.0.71.9', partition: 'cluster01', id: '12-abc', reason: 'no activity', deadline: Date.now() + deadlineMs });
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-remediator-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function script(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

describe('command remediator', () => {
  it('gets the job on stdin and only its fixed arguments; started = accepted, exit 0 = done', async () => {
    const path = await script('ok.sh', `printf '%s\\n' "$@" > "${dir}/argv"; cat > "${dir}/stdin"; echo rebuilt`);
    const accepted: string[] = [];
    const r = await externalRemediator({ strategy: 'external', command: { path, args: ['--site', 'a b'] } }, SECRET, systemClock).remediate(job(), (d) => accepted.push(d));
    expect(r).toEqual({ outcome: 'done', detail: `the command ${path} exited 0: rebuilt` });
    expect(accepted).toHaveLength(1);
    expect(await readFile(join(dir, 'argv'), 'utf8')).toBe('--site\na b\n');
    const stdin = await readFile(join(dir, 'stdin'), 'utf8');
    expect(stdin).toMatch(/^action=remediate\nhost=127\.0\.71\.9\npartition=cluster01\nremediation_id=12-abc\nreason=no activity\ndeadline=\d{4}-.*Z\nsecret=rem-s3cret-71\n$/);
  });

  it('a non-zero exit is a coded failure naming it, the secret masked', async () => {
    const path = await script('bad.sh', `echo "token ${SECRET} rejected"; exit 3`);
    const p = externalRemediator({ strategy: 'external', command: { path, args: [] } }, SECRET, systemClock).remediate(job(), () => undefined);
    const e = await p.then(() => null, (x: unknown) => x);
    expect((e as { code?: string }).code).toBe('RemediationFailed');
    expect((e as Error).message).toContain(`exited 3: token *** rejected`);
    expect((e as Error).message).not.toContain(SECRET);
  });

  it('a command still running at the deadline is killed with its group and fails', async () => {
    const path = await script('slow.sh', `sleep 300 & echo $! > "${dir}/child"; wait`);
    const e = await externalRemediator({ strategy: 'external', command: { path, args: [] } }, '', systemClock).remediate(job(1500), () => undefined).then(() => null, (x: unknown) => x);
    expect((e as Error).message).toMatch(/did not finish before the remediation timeout/);
    const child = Number(await readFile(join(dir, 'child'), 'utf8'));
    for (let i = 0; i < 100 && alive(child); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(child)).toBe(false);
  });

  it('a missing executable fails at once', async () => {
    const e = await externalRemediator({ strategy: 'external', command: { path: join(dir, 'none'), args: [] } }, '', systemClock).remediate(job(), () => undefined).then(() => null, (x: unknown) => x);
    expect((e as Error).message).toMatch(/could not start: ENOENT/);
  });
});

describe('webhook remediator', () => {
  let server: Server;
  const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
  /** Status to answer for each request in turn (the last one repeats). */
  let answers: number[] = [202];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (b: Buffer) => { body += b.toString('utf8'); });
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        res.statusCode = answers[Math.min(seen.length - 1, answers.length - 1)] ?? 500;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(18201, '127.0.71.1', resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const url = 'http://127.0.71.1:18201/remediate';

  it('POSTs the job with the callback hint and the secret as a Bearer token; retries a 503, a 2xx = accepted', async () => {
    seen.length = 0;
    answers = [503, 202];
    const r = await externalRemediator({ strategy: 'external', webhook: { url } }, SECRET, systemClock).remediate(job(), () => undefined);
    expect(r).toEqual({ outcome: 'accepted', detail: 'the webhook answered 202' });
    expect(seen).toHaveLength(2);
    const first = seen[0];
    expect(first?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(first?.headers['idempotency-key']).toBe('12-abc');
    expect(JSON.parse(first?.body ?? '{}')).toMatchObject({
      remediationId: '12-abc', host: '127.0.71.9', partition: 'cluster01', reason: 'no activity',
      callback: { action: 'CompleteHostRemediation', parameters: { Host: '127.0.71.9', RemediationId: '12-abc' }, results: ['succeeded', 'failed'] },
    });
    expect(seen[1]?.body).toBe(first?.body);
  });

  it('a 4xx refusal fails at once, without retries', async () => {
    seen.length = 0;
    answers = [403];
    const e = await externalRemediator({ strategy: 'external', webhook: { url } }, '', systemClock).remediate(job(), () => undefined).then(() => null, (x: unknown) => x);
    expect((e as Error).message).toMatch(/the webhook refused it: HTTP 403/);
    expect(seen).toHaveLength(1);
  });

  it('a receiver that is down is retried until the deadline, then fails naming the last error', async () => {
    const e = await externalRemediator({ strategy: 'external', webhook: { url: 'http://127.0.71.2:18202/x' } }, '', systemClock)
      .remediate(job(2000), () => undefined).then(() => null, (x: unknown) => x);
    expect((e as Error).message).toMatch(/did not accept it before the remediation timeout \(last: ECONNREFUSED\)/);
  });
});
