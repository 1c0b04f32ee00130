/**
 * euca-complete-host-remediation HOST REMEDIATION_ID --result succeeded|failed [--message TEXT]: the
 * external remediator (or an operator) reports the remediation HA handed out done or failed.
 * Prints the host's HOSTHA rows after the step.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { hostHaLines } from './haFormat.js';
import { readResponse } from './responses.js';

const completeHostRemediationCommand: CliCommand = {
  name: 'euca-complete-host-remediation',
  description: 'Report an external remediation of a node done (HA re-checks its health) or failed (HA fences it)',
  configure: (cmd) => cmd
    .argument('<host>', 'the node\'s host address')
    .argument('<remediation-id>', 'the remediationId HA handed out (webhook body, the command\'s stdin, euca-describe-host-ha)')
    .addOption(new Option('--result <result>', 'how it ended').choices(['succeeded', 'failed']).makeOptionMandatory())
    .option('--message <text>', 'a line for the HA event log'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { Host: String(args[0]), RemediationId: String(args[1]), Result: String(opts.result) };
    if (typeof opts.message === 'string') params.Message = opts.message;
    const r = readResponse('HostHA', await client.call('CompleteHostRemediation', params), url);
    return { json: r, lines: hostHaLines(r.host) };
  },
};

await runCli(completeHostRemediationCommand);
