/**
 * External remediation (issue 15, after Cluster API's MachineHealthCheck `remediationTemplate` and
 * Medik8s' remediators): per cluster, HA either power-cycles and fences itself (`fence`, the
 * default) or first hands a failed host to an operator-supplied command or webhook (`external`) and
 * waits for it to report done. Pure: the settings (validated once, STYLE habit 7), the command's
 * stdin and the webhook's body. The runner's adapter (externalRemediator.ts) does the I/O.
 *
 * The command runs without a shell: an absolute path and fixed arguments; what the remediation is
 * about comes on stdin as `key=value` lines (as fence agents take their options), the secret among
 * them, so nothing of it is interpolated into a command line or shows in `ps`. The webhook gets a
 * JSON POST; the secret goes in an `Authorization: Bearer` header, never in the URL.
 */
import { z } from 'zod';

const oneLine = (max: number) => z.string().max(max, `must be at most ${max} characters`).regex(/^[^\r\n\0]*$/, 'must be one line');

/** What ConfigureHAForCluster stores in the partition's config (clc.json; the secret lives in bmc.json). */
export const remediationConfigSchema = z.strictObject({
  strategy: z.enum(['fence', 'external']),
  /** An executable run without a shell; `args` are passed as they are, before nothing else. */
  command: z.strictObject({
    path: oneLine(1024).regex(/^\//, 'must be an absolute path'),
    args: z.array(oneLine(1024)).max(32, 'at most 32 arguments'),
  }).optional(),
  /** Receives a JSON POST per remediation. */
  webhook: z.strictObject({
    url: oneLine(2048).refine(isWebhookUrl, 'must be an http:// or https:// URL without a user or password (use RemediationSecret)'),
  }).optional(),
}).superRefine((r, ctx) => {
  const targets = (r.command ? 1 : 0) + (r.webhook ? 1 : 0);
  if (r.strategy === 'external' && targets !== 1) ctx.addIssue({ code: 'custom', path: ['strategy'], message: 'external remediation needs exactly one of a command or a webhook' });
  if (r.strategy === 'fence' && targets !== 0) ctx.addIssue({ code: 'custom', path: ['strategy'], message: 'a command or webhook is only used with strategy external' });
});
export type RemediationConfig = z.infer<typeof remediationConfigSchema>;

export function isWebhookUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/** One remediation handed out: what the command's stdin and the webhook's body say. */
export interface RemediationJob {
  readonly host: string;
  readonly partition: string;
  readonly id: string;
  readonly reason: string;
  /** Epoch ms: the report must come before it, or HA escalates. */
  readonly deadline: number;
}

const flat = (s: string): string => s.replace(/[\r\n\0]+/g, ' ');

/** The command's stdin: `key=value` lines, the secret last (absent when none is set). */
export function remediationStdin(job: RemediationJob, secret: string): string {
  const lines: [string, string][] = [
    ['action', 'remediate'], ['host', job.host], ['partition', job.partition], ['remediation_id', job.id],
    ['reason', job.reason], ['deadline', new Date(job.deadline).toISOString()],
  ];
  if (secret.length > 0) lines.push(['secret', secret]);
  return lines.map(([k, v]) => `${k}=${flat(v)}\n`).join('');
}

/** The webhook's JSON body: the job, and how to report (the callback hint). */
export function webhookBody(job: RemediationJob): string {
  return JSON.stringify({
    remediationId: job.id, host: job.host, partition: job.partition, reason: job.reason, deadline: new Date(job.deadline).toISOString(),
    callback: { action: 'CompleteHostRemediation', parameters: { Host: job.host, RemediationId: job.id }, results: ['succeeded', 'failed'] },
  });
}

/** What an API or a log line may show of a partition's remediation. */
export interface PublicRemediationView {
  readonly strategy: 'fence' | 'external';
  readonly command: { readonly path: string; readonly args: readonly string[] } | null;
  readonly webhook: string | null;
  readonly secretSet: boolean;
}

export function publicRemediationView(cfg: RemediationConfig | undefined, secret: string | undefined): PublicRemediationView {
  return {
    strategy: cfg?.strategy ?? 'fence', command: cfg?.command ? { path: cfg.command.path, args: [...cfg.command.args] } : null,
    webhook: cfg?.webhook?.url ?? null, secretSet: (secret ?? '').length > 0,
  };
}
