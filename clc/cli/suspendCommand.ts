/**
 * euca-suspend-ha / euca-resume-ha (--host H | -c CLUSTER | -p PARTITION): pause or resume automatic
 * recovery and fencing; suspend takes --until TIME or --minutes N (else until lifted) and --reason.
 */
import type { CliCommand } from './command.js';
import { oneOf } from './haArgs.js';
import { readResponse } from './responses.js';

const SCOPES: Readonly<Record<string, string>> = { host: 'Host', cluster: 'Cluster', partition: 'Partition' };
const SCOPE_USAGE = 'give exactly one of --host HOST, -c CLUSTER, -p PARTITION';

function scopeParams(opts: Readonly<Record<string, unknown>>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [opt, param] of Object.entries(SCOPES)) if (typeof opts[opt] === 'string') params[param] = opts[opt];
  return params;
}

export function suspendCommand(suspend: boolean): CliCommand {
  return {
    name: suspend ? 'euca-suspend-ha' : 'euca-resume-ha',
    description: suspend ? 'Pause automatic recovery and fencing for a node, cluster or partition' : 'Resume automatic recovery and fencing',
    configure: (cmd) => {
      cmd.option('--host <host>', 'a node').option('-c, --cluster <name>', 'a cluster').option('-p, --partition <name>', 'a partition');
      return suspend
        ? cmd.option('--until <time>', 'until this ISO 8601 UTC time').option('--minutes <n>', 'for N minutes').option('--reason <text>', 'why (logged)')
        : cmd;
    },
    validate: (opts) => oneOf(opts, Object.keys(SCOPES), SCOPE_USAGE)
      ?? (opts.until !== undefined && opts.minutes !== undefined ? 'give --until or --minutes, not both' : undefined),
    async run({ client, url, opts }) {
      const params = scopeParams(opts);
      if (!suspend) {
        const r = readResponse('Resumed', await client.call('ResumeHA', params), url);
        return { json: r, lines: [['RESUMED', r.scope, r.wasSuspended === 'true' ? 'was-suspended' : 'was-not-suspended'].join('\t')] };
      }
      if (typeof opts.until === 'string') params.Until = opts.until;
      if (typeof opts.minutes === 'string') params.DurationMinutes = opts.minutes;
      if (typeof opts.reason === 'string') params.Reason = opts.reason;
      const r = readResponse('Suspension', await client.call('SuspendHA', params), url);
      return { json: r, lines: [['SUSPENDED', r.scope, r.until || 'until-lifted', r.by, r.reason].join('\t')] };
    },
  };
}
