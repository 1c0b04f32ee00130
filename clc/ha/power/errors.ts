/**
 * The power-management surface's error registry (STYLE habit 6): what a fence agent run can end in.
 * Messages never carry the BMC password (the adapter redacts agent output before it lands here).
 */
import { client, defineErrors, server } from '../../../shared/errors/registry.js';

export const PowerErrors = defineErrors({
  /** Per-host fence settings that cannot be used (bad agent name, option, or a newline in a value). */
  InvalidFenceConfig: client(400, 'Invalid fence agent settings: {detail}'),
  /** The agent is not installed on this CLC's machine; retrying does not help. */
  FenceAgentNotFound: server(500, 'The fence agent {agent} is not installed (not found on PATH)', false),
  /** The agent ran and reported a failure (exit 1): wrong credentials, BMC refused or unreachable. */
  FenceAgentFailed: server(502, 'The fence agent {agent} failed to {action} {target}: {detail}'),
  /** The agent did not finish in time and was killed with its process group. */
  FenceAgentTimedOut: server(504, 'The fence agent {agent} did not finish {action} on {target} within {timeoutMs} ms; it was killed'),
  /** The agent answered in a way the protocol does not allow (an unknown exit code or signal). */
  FenceAgentProtocolError: server(502, 'The fence agent {agent} answered {action} on {target} unexpectedly: {detail}'),
});
