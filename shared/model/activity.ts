/**
 * What a neighbour saw of a suspect host's activity on shared storage (host HA, issue 6): shared
 * because the NC looks and the CLC decides.
 *   active    a heartbeat or VM disk write since the reference time: the host still runs guests;
 *   inactive  files there, none written since: no sign of life;
 *   unknown   nothing to judge by, or the look failed (never counts toward a power action).
 */
export type ActivityOutcome = 'active' | 'inactive' | 'unknown';
