/**
 * The connection-limit flags every serving daemon takes (CLC, CC, NC): header and request
 * timeouts and the pending-connection caps (docs/OPERATIONS.md "Connection limits"). One place, so
 * the three name, bound and check them the same way; each daemon prefixes the env vars.
 */
import type { z } from 'zod';
import { DEFAULT_CONNECTION_LIMITS as D, type ConnectionLimits } from '../net/connectionGuard.js';
import { intFlag, type FlagField } from './flagTable.js';

/** Schema fields, to spread into a daemon's z.object. */
export const connectionLimitShape = {
  headersTimeoutMs: intFlag(D.headersTimeoutMs, 100, 600_000),
  requestTimeoutMs: intFlag(D.requestTimeoutMs, 100, 3_600_000),
  maxPendingConnections: intFlag(D.maxPending, 1, 1_000_000),
  maxPendingPerPeer: intFlag(D.maxPendingPerPeer, 1, 1_000_000),
};

type LimitFields = { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number; readonly maxPendingConnections: number; readonly maxPendingPerPeer: number };

/** For a schema's superRefine: the request timeout covers the head, so it may not be shorter. */
export function checkConnectionLimits(r: LimitFields, ctx: z.RefinementCtx): void {
  if (r.requestTimeoutMs < r.headersTimeoutMs) ctx.addIssue({ code: 'custom', path: ['requestTimeoutMs'], message: `must be at least --headers-timeout-ms (${r.headersTimeoutMs})` });
  if (r.maxPendingPerPeer > r.maxPendingConnections) ctx.addIssue({ code: 'custom', path: ['maxPendingPerPeer'], message: `must be at most --max-pending-connections (${r.maxPendingConnections})` });
}

export function connectionLimitsOf(r: LimitFields): ConnectionLimits {
  return Object.freeze({
    headersTimeoutMs: r.headersTimeoutMs, requestTimeoutMs: r.requestTimeoutMs, maxPending: r.maxPendingConnections, maxPendingPerPeer: r.maxPendingPerPeer,
  });
}

export type ConnectionLimitField = keyof typeof connectionLimitShape;

export interface FlagSpec {
  /** The commander flag with its argument, e.g. `--headers-timeout-ms <ms>`. */
  readonly flag: string;
  readonly env: string;
  readonly help: string;
}

/** Flag, env var (`envPrefix` is FERRY_CLC, FERRY_CC or FERRY_NC) and help of each field. */
export function connectionLimitFlags(envPrefix: string): Readonly<Record<ConnectionLimitField, FlagSpec>> {
  return {
    headersTimeoutMs: {
      flag: '--headers-timeout-ms <ms>', env: `${envPrefix}_HEADERS_TIMEOUT_MS`,
      help: `a connection that has not sent its whole request head (or finished its TLS handshake) within this is closed (${D.headersTimeoutMs})`,
    },
    requestTimeoutMs: {
      flag: '--request-timeout-ms <ms>', env: `${envPrefix}_REQUEST_TIMEOUT_MS`,
      help: `... and one that has not sent its whole request, body included, within this (${D.requestTimeoutMs})`,
    },
    maxPendingConnections: {
      flag: '--max-pending-connections <n>', env: `${envPrefix}_MAX_PENDING_CONNECTIONS`,
      help: `connections without a request being served (idle, half-sent), at most; past it the oldest of the peer holding the most is closed, never the newcomer; lowered to fit the open-file limit (${D.maxPending})`,
    },
    maxPendingPerPeer: {
      flag: '--max-pending-per-peer <n>', env: `${envPrefix}_MAX_PENDING_PER_PEER`,
      help: `the same for one peer: an address, or a certificate's role and name with TLS (${D.maxPendingPerPeer})`,
    },
  };
}

/** The same as flag-table rows (shared/config/flagTable.ts). */
export function connectionLimitFields(envPrefix: string): FlagField[] {
  return Object.entries(connectionLimitFlags(envPrefix)).map(([field, f]) => [field, f.flag, f.env, f.help] as const);
}
