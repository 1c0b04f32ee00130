/**
 * The ClusterLabs fence-agent protocol, pure (no process here): per-host settings validated once,
 * the stdin `key=value` lines for an action, and the meaning of an agent's exit. Facts from
 * docs/OPERATIONS.md "Fencing lab": exit 0 success (status: ON), 2 status OFF, 1 failure; "Already OFF"
 * is a success; fence_ipmilan stalls 10-14 s per call without cipher=3.
 */
import { z } from 'zod';
import { PowerErrors } from './errors.js';
import type { PowerState } from './powerDriver.js';

export type AgentAction = 'status' | 'on' | 'off' | 'reboot';

export interface FenceAgentConfig {
  /** fence_ipmilan, fence_redfish, any fence_* on PATH. */
  readonly agent: string;
  /** What is fenced, for messages (the host name). */
  readonly target: string;
  /** The agent's own options (ip, ipport, username, ...), without the password. */
  readonly options: Readonly<Record<string, string>>;
  /** Sent on stdin only; never on a command line, never logged, never returned by an API. */
  readonly password: string;
  /** Hard bound: the agent and its children are killed after this long. */
  readonly timeoutMs: number;
}

const oneLine = z.string().regex(/^[^\r\n\0]*$/, 'must be one line');

/** Secrets go through `password` only; these would carry or print one. */
const RESERVED = new Set(['action', 'password', 'passwd', 'password_script', 'passwd_script', 'verbose', 'verbose_level', 'debug', 'debug_file']);

/** A Redfish resource path (fence_redfish appends it to https://ip:port as is): no spaces, no `.`/`..` segments. */
export function isRedfishPath(v: string): boolean {
  // Segments end in a slash except the last: an optional slash after a run of characters let the
  // engine split a long run every way before failing (exponential on "/aaaa…a b"; found by the property test).
  return v.length <= 255 && /^\/(?:[A-Za-z0-9._~@:+-]+\/)*(?:[A-Za-z0-9._~@:+-]+)?$/.test(v) && !/(?:^|\/)\.{1,2}(?:\/|$)/.test(v);
}

/**
 * Values the agents' options must have where fencing.py would misread others. Its stdin parser
 * keeps a flag option whatever its value and its checks test presence, so `ssl_insecure=0` still
 * turns certificate checks off: a flag is `1` or absent.
 */
const OPTION_RULES: Readonly<Record<string, { readonly ok: (v: string) => boolean; readonly message: string }>> = {
  ipport: { ok: (v) => /^[0-9]{1,5}$/.test(v) && Number(v) >= 1 && Number(v) <= 65535, message: 'must be a port, 1-65535' },
  ssl_insecure: { ok: (v) => v === '1', message: 'must be 1 or absent (the agent reads any value, even 0, as on)' },
  ssl_secure: { ok: (v) => v === '1', message: 'must be 1 or absent (the agent reads any value, even 0, as on)' },
  redfish_uri: { ok: isRedfishPath, message: 'must be a path such as /redfish/v1 (no spaces, no ..)' },
  systems_uri: { ok: isRedfishPath, message: 'must be a path such as /redfish/v1/Systems/1 (no spaces, no ..)' },
};

const optionsSchema = z.record(z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'option names are lower-case words'), oneLine)
  .refine((o) => !Object.keys(o).some((k) => RESERVED.has(k)), `options may not set ${[...RESERVED].join(', ')}`)
  .superRefine((o, ctx) => {
    for (const [k, v] of Object.entries(o)) {
      const rule = OPTION_RULES[k];
      if (rule && !rule.ok(v)) ctx.addIssue({ code: 'custom', path: [k], message: rule.message });
    }
  });

const configSchema = z.strictObject({
  agent: z.string().regex(/^fence_[a-z0-9_]{1,40}$/, 'must be a fence_* agent name'),
  target: oneLine.min(1),
  options: optionsSchema,
  password: oneLine,
  timeoutMs: z.number().int().min(1000).max(600_000),
});

export function compileFenceAgentConfig(raw: unknown): FenceAgentConfig {
  const r = configSchema.safeParse(raw);
  if (!r.success) {
    const detail = r.error.issues.map((i) => `${i.path.join('.') || 'settings'}: ${i.message}`).join('; ');
    throw PowerErrors.make('InvalidFenceConfig', { detail });
  }
  return Object.freeze({ ...r.data, options: Object.freeze({ ...r.data.options }) });
}

/** Options an agent always gets, whatever the settings say. */
const FORCED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // Without cipher 3 every call stalls on "Unable to Get Channel Cipher Suites"; RMCP+ only.
  fence_ipmilan: { lanplus: '1', cipher: '3' },
};

/** The stdin of one agent run. power_timeout keeps the agent's own bound inside ours. */
export function agentStdin(cfg: FenceAgentConfig, action: AgentAction): string {
  const ownBoundS = Math.max(1, Math.floor((cfg.timeoutMs - 1000) / 1000));
  const opts: Record<string, string> = {
    power_wait: '0', power_timeout: String(ownBoundS), ...cfg.options, ...FORCED[cfg.agent], password: cfg.password, action,
  };
  return Object.entries(opts).map(([k, v]) => `${k}=${v}\n`).join('');
}

/** The agent's environment: Python's DeprecationWarning noise off. */
export function agentEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...base, PYTHONWARNINGS: 'ignore::DeprecationWarning' };
}

/** Replaces the password wherever it appears (an agent in a verbose mood prints its ipmitool command). */
export function redact(text: string, password: string): string {
  return password.length === 0 ? text : text.split(password).join('***');
}

/** What fencing.py's fail_usage adds after every real reason (fence_redfish ends each failure so). */
const USAGE_HINT = /^Please use '-h' for usage$/;

/** The last meaningful line an agent printed, for an error's detail. */
export function lastLine(out: string): string {
  const lines = out.split('\n').map((l) => l.replace(/^(?:[\d-]+ [\d:,]+ )?(?:ERROR|WARNING): /, '').trim()).filter((l) => l.length > 0 && !USAGE_HINT.test(l));
  return (lines[lines.length - 1] ?? '(no output)').slice(0, 300);
}

export type AgentOutcome =
  | { readonly ok: true; readonly state?: PowerState; readonly alreadyOff: boolean }
  | { readonly ok: false; readonly code: 'FenceAgentFailed' | 'FenceAgentProtocolError'; readonly detail: string };

/** What an agent's exit means for `action`. `output` is its redacted stdout+stderr. */
export function interpretExit(action: AgentAction, exitCode: number | null, signal: string | null, output: string): AgentOutcome {
  if (exitCode === null) return { ok: false, code: 'FenceAgentProtocolError', detail: `killed by ${signal ?? 'a signal'}` };
  if (action === 'status') {
    if (exitCode === 0) return { ok: true, state: 'on', alreadyOff: false };
    if (exitCode === 2) return { ok: true, state: 'off', alreadyOff: false };
  } else if (exitCode === 0) {
    return { ok: true, alreadyOff: action === 'off' && /Already OFF/i.test(output) };
  }
  if (exitCode === 1 || (action !== 'status' && exitCode === 2)) return { ok: false, code: 'FenceAgentFailed', detail: lastLine(output) };
  return { ok: false, code: 'FenceAgentProtocolError', detail: `exit code ${exitCode}: ${lastLine(output)}` };
}
