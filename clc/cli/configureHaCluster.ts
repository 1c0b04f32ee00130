/**
 * euca-configure-ha-cluster [PARTITION] [--set NAME=VALUE]... [--max-unhealthy N|N%] [--unhealthy-range [MIN-MAX]|none] [--auto-repair
 * off|migrate|failover] [--remediation fence|external] [--remediation-command PATH [--remediation-arg ARG]...]
 * [--remediation-webhook URL] [--remediation-secret-file FILE | --remediation-secret-env NAME]: host-HA settings of a
 * partition (or, without PARTITION, the global layer). The remediator's secret is never an argument
 * (it would show in `ps`): a file's first line, or an environment variable; an empty one removes it.
 * Prints the resulting HACONFIG (and REMEDIATOR) rows.
 */
import { Option } from 'commander';
import type { CliCommand } from './command.js';
import { runCli } from './command.js';
import { collectSetting, readSecret } from './haArgs.js';
import { haConfigLines } from './haFormat.js';
import { readResponse } from './responses.js';

const configureHaClusterCommand: CliCommand = {
  name: 'euca-configure-ha-cluster',
  description: 'Configure host HA for a partition (or globally): settings, storm bound, auto-repair',
  configure: (cmd) => cmd
    .argument('[partition]', 'the partition; without it the global defaults every partition inherits')
    .option('--set <name=value>', 'a setting, e.g. fenceTimeoutMs=45000 (repeatable)', collectSetting)
    .option('--max-unhealthy <n>', 'storm protection: a host count (2) or a percentage (40%)')
    .option('--unhealthy-range <range>', 'storm protection as Cluster API\'s unhealthyRange: remediate only while [MIN-MAX] hosts are unhealthy (over --max-unhealthy); "none" removes it')
    .addOption(new Option('--auto-repair <level>', 'the partition\'s auto-repair level').choices(['off', 'migrate', 'failover']))
    .addOption(new Option('--remediation <strategy>', 'fence (HA power-cycles and fences) or external (a command or webhook first, fenced if it fails)').choices(['fence', 'external']))
    .option('--remediation-command <path>', 'external remediation: an executable (absolute path) run without a shell; the job comes on its stdin as key=value lines')
    .option('--remediation-arg <arg>', 'a fixed argument of the remediation command (repeatable)', (a: string, prev: string[] = []) => [...prev, a])
    .option('--remediation-webhook <url>', 'external remediation: an http(s) URL that gets a JSON POST per remediation')
    .option('--remediation-secret-file <file>', 'the remediator\'s secret: the first line of FILE (stdin secret= for a command, Bearer token for a webhook)')
    .option('--remediation-secret-env <name>', 'the remediator\'s secret from the environment variable NAME'),
  async run({ client, url, args, opts }) {
    const params: Record<string, string> = { ...(opts.set as Record<string, string> | undefined) };
    if (typeof args[0] === 'string') params.Partition = args[0];
    if (typeof opts.maxUnhealthy === 'string') params.MaxUnhealthy = opts.maxUnhealthy;
    if (typeof opts.unhealthyRange === 'string') params.UnhealthyRange = opts.unhealthyRange;
    if (typeof opts.autoRepair === 'string') params.AutoRepair = opts.autoRepair;
    if (typeof opts.remediation === 'string') params.Remediation = opts.remediation;
    if (typeof opts.remediationCommand === 'string') params.RemediationCommand = opts.remediationCommand;
    ((opts.remediationArg as string[] | undefined) ?? []).forEach((a, i) => { params[`RemediationArg.${i + 1}`] = a; });
    if (typeof opts.remediationWebhook === 'string') params.RemediationWebhook = opts.remediationWebhook;
    const secret = await readSecret({ file: opts.remediationSecretFile, env: opts.remediationSecretEnv, what: '--remediation-secret' }, process.env);
    if (secret !== undefined) params.RemediationSecret = secret;
    const r = readResponse('HAConfigurations', await client.call('ConfigureHAForCluster', params), url);
    return { json: r, lines: haConfigLines(r) };
  },
};

await runCli(configureHaClusterCommand);
