/**
 * The real ReplicaProbe (clc/core/leadership.ts): one GET of a replica's REPLICA_ALIVE_PATH over HTTP,
 * answered 204 by a live CLC (clc/api/app.ts). A refused connection, a timeout or any other status is
 * "does not answer"; nothing is thrown.
 */
import { REPLICA_ALIVE_PATH, type ReplicaProbe } from '../core/leadership.js';

/** A kill -9'd replica's port refuses at once on loopback; a frozen one is waited for this long. */
export const DEFAULT_REPLICA_PROBE_TIMEOUT_MS = 1000;

export function httpReplicaProbe(timeoutMs: number = DEFAULT_REPLICA_PROBE_TIMEOUT_MS): ReplicaProbe {
  return {
    async answers(url) {
      try {
        const res = await fetch(new URL(REPLICA_ALIVE_PATH, url), { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
        await res.arrayBuffer();
        return res.status === 204;
      } catch {
        return false;
      }
    },
  };
}
