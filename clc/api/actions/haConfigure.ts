/**
 * ConfigureHAForHost: a node's BMC (fence agent, address, port, user, password, timeout, and for
 * fence_redfish ssl_insecure, systems_uri, redfish_uri; merged into its current settings, the
 * password only stored, never returned) and its HA record. The node's
 * partition is its CC's (found like EnableService does) unless HA already knows the host.
 *
 * ConfigureHAForCluster: the CloudStack KVM HA settings, MaxUnhealthy and AutoRepair of one
 * partition, or the global layer without Partition. Only the given settings change. A partition's
 * remediation (issue 15): Remediation=fence|external, RemediationCommand (an absolute path) with
 * RemediationArg.N, or RemediationWebhook (http(s) URL), and RemediationSecret ('' removes it);
 * the secret is stored with the BMC passwords and only ever shown as `secretSet`.
 */
import { z } from 'zod';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { partitionNames } from '../../clusters/clusters.js';
import { findNodePartition } from '../../core/nodeLookup.js';
import { requireZone } from '../../core/zones.js';
import { isRedfishPath } from '../../ha/power/fenceAgentProtocol.js';
import { autoRepairSchema } from '../../ha/repairPolicy.js';
import { haSettingsOverrideSchema, type HaSettingsOverride } from '../../ha/settings.js';
import { maxUnhealthySchema, unhealthyRangeSchema } from '../../ha/stormGuard.js';
import { defineAction, type ActionContext } from '../action.js';
import { boolParam, coded, intParam, paramList, parseActionParams } from '../actionParams.js';
import type { RemediationInput } from '../../ha/haControl.js';
import type { ParamMap } from '../queryParams.js';
import { configurationsXml, hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa } from './haCommon.js';

const oneLine = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').regex(/^[^\r\n\0]*$/, 'must be one line');

/** A Redfish path, or empty to remove the setting (fence_redfish then discovers the system). */
const redfishPathParam = z.string().refine((s) => s === '' || isRedfishPath(s), 'expected a path such as /redfish/v1/Systems/1 (no spaces, no . or .. segments), or empty');

/** The agent options behind SslInsecure, SystemsUri and RedfishUri: a value sets one, null removes it. */
export function agentOptionsOf(p: ConfigureHostParams): Record<string, string | null> | undefined {
  const o: Record<string, string | null> = {};
  // fencing.py reads ssl_insecure=0 as on, so off means no option at all.
  if (p.SslInsecure !== undefined) o.ssl_insecure = p.SslInsecure ? '1' : null;
  if (p.SystemsUri !== undefined) o.systems_uri = p.SystemsUri || null;
  if (p.RedfishUri !== undefined) o.redfish_uri = p.RedfishUri || null;
  return Object.keys(o).length > 0 ? o : undefined;
}

const hostSchemaParams = z.strictObject({
  Host: hostSchema,
  Partition: partitionSchema.optional(),
  Agent: z.string().regex(/^fence_[a-z0-9_]{1,40}$/, 'expected a fence agent name such as fence_ipmilan').optional(),
  Address: oneLine.optional(),
  Port: intParam(1, 65535).optional(),
  Username: oneLine.optional(),
  Password: z.string().max(255, 'must be at most 255 characters').regex(/^[^\r\n\0]*$/, 'must be one line').optional(),
  TimeoutMs: intParam(1000, 600_000).optional(),
  SslInsecure: boolParam.optional(),
  SystemsUri: redfishPathParam.optional(),
  RedfishUri: redfishPathParam.optional(),
});

export type ConfigureHostParams = Readonly<z.infer<typeof hostSchemaParams>>;

export function parseConfigureHAForHost(params: ParamMap): ConfigureHostParams {
  return parseActionParams(hostSchemaParams, params);
}

async function runConfigureHost(p: ConfigureHostParams, ctx: ActionContext): Promise<XmlObject> {
  const ha = requireHa(ctx);
  const known = ctx.store.read().ha.hosts[p.Host];
  let partition = known?.partition;
  if (p.Partition !== undefined) requireZone(ctx.clusters, p.Partition);
  if (partition === undefined) {
    const candidates = p.Partition !== undefined ? [p.Partition] : partitionNames(ctx.clusters);
    partition = await findNodePartition(ctx, p.Host, candidates, p.Partition);
  }
  const view = await ha.configureHost({
    host: p.Host, partition: p.Partition ?? partition, by: operatorOf(ctx),
    bmc: { agent: p.Agent, address: p.Address, port: p.Port, username: p.Username, password: p.Password, timeoutMs: p.TimeoutMs, options: agentOptionsOf(p) },
  });
  ctx.logger.info({ host: p.Host, partition, bmc: view.bmc }, 'host HA configured');
  return { host: hostHaItem(view) };
}

export const configureHAForHost = defineAction({ namespace: EUCA_NAMESPACE, parse: parseConfigureHAForHost, run: runConfigureHost });

/** `healthCheckTimeoutMs` is sent as `HealthCheckTimeoutMs`. */
export const settingParam = (key: string): string => `${key.charAt(0).toUpperCase()}${key.slice(1)}`;

const SETTING_KEYS = Object.keys(haSettingsOverrideSchema.shape) as (keyof HaSettingsOverride)[];

const decimal = z.string().regex(/^\d{1,9}(\.\d{1,6})?$/, 'expected a number').transform(Number);

const settingsShape = Object.fromEntries(SETTING_KEYS.map((k) => [
  settingParam(k), decimal.pipe(haSettingsOverrideSchema.shape[k].unwrap() as z.ZodNumber).optional(),
])) as Record<string, z.ZodOptional<z.ZodType<number, string>>>;

const clusterSchema = z.strictObject({
  Partition: partitionSchema.optional(),
  MaxUnhealthy: z.string().refine((s) => maxUnhealthySchema.safeParse(s).success, 'expected a host count ("2") or a percentage ("40%")').optional(),
  // Cluster API's unhealthyRange; "none" removes it (maxUnhealthy decides again).
  UnhealthyRange: z.string().refine((s) => s === 'none' || unhealthyRangeSchema.safeParse(s).success, 'expected a range such as "[2-5]" (lower bound not above the upper) or "none"').optional(),
  AutoRepair: autoRepairSchema.optional(),
  Remediation: z.enum(['fence', 'external']).optional(),
  RemediationCommand: z.string().optional(),
  RemediationArg: paramList(z.string()).optional(),
  RemediationWebhook: z.string().optional(),
  RemediationSecret: z.string().max(1024, 'must be at most 1024 characters').regex(/^[^\r\n\0]*$/, 'must be one line').optional(),
  ...settingsShape,
})
  .refine((p) => p.RemediationArg === undefined || p.RemediationCommand !== undefined, {
    path: ['RemediationArg'], ...coded('InvalidParameterCombination', 'RemediationArg.N needs RemediationCommand', { detail: 'RemediationArg.N is given only with RemediationCommand' }),
  })
  .refine((p) => p.RemediationCommand === undefined || p.RemediationWebhook === undefined, {
    path: ['RemediationWebhook'], ...coded('InvalidParameterCombination', 'one remediator', { detail: 'give RemediationCommand or RemediationWebhook, not both' }),
  })
  .transform((p) => ({
    partition: p.Partition as string | undefined,
    maxUnhealthy: p.MaxUnhealthy as string | undefined,
    unhealthyRange: (p.UnhealthyRange === 'none' ? null : p.UnhealthyRange) as string | null | undefined,
    autoRepair: p.AutoRepair as z.infer<typeof autoRepairSchema> | undefined,
    remediation: remediationInput(p),
    settings: Object.fromEntries(SETTING_KEYS.flatMap((k) => {
      const v = (p as Record<string, unknown>)[settingParam(k)];
      return v === undefined ? [] : [[k, v]];
    })) as HaSettingsOverride,
  }))
  .refine((p) => p.maxUnhealthy !== undefined || p.unhealthyRange !== undefined || p.autoRepair !== undefined || p.remediation !== undefined || Object.keys(p.settings).length > 0, {
    path: ['MaxUnhealthy'], ...coded('MissingParameter', 'nothing to configure', { parameter: `MaxUnhealthy, UnhealthyRange, AutoRepair, Remediation or a setting (${SETTING_KEYS.map(settingParam).join(', ')})` }),
  });

/** The remediation parameters given, or undefined when none is (HaControl validates what they make together). */
function remediationInput(p: { Remediation?: 'fence' | 'external'; RemediationCommand?: string; RemediationArg?: string[]; RemediationWebhook?: string; RemediationSecret?: string }): RemediationInput | undefined {
  if ([p.Remediation, p.RemediationCommand, p.RemediationWebhook, p.RemediationSecret].every((v) => v === undefined)) return undefined;
  return {
    ...(p.Remediation !== undefined ? { strategy: p.Remediation } : {}),
    ...(p.RemediationCommand !== undefined ? { command: { path: p.RemediationCommand, args: p.RemediationArg ?? [] } } : {}),
    ...(p.RemediationWebhook !== undefined ? { webhook: p.RemediationWebhook } : {}),
    ...(p.RemediationSecret !== undefined ? { secret: p.RemediationSecret } : {}),
  };
}

export type ConfigureClusterParams = Readonly<z.infer<typeof clusterSchema>>;

export function parseConfigureHAForCluster(params: ParamMap): ConfigureClusterParams {
  return parseActionParams(clusterSchema, params);
}

async function runConfigureCluster(p: ConfigureClusterParams, ctx: ActionContext): Promise<XmlObject> {
  const ha = requireHa(ctx);
  if (p.partition !== undefined) requireZone(ctx.clusters, p.partition);
  const view = await ha.configureCluster({
    ...(p.partition !== undefined ? { partition: p.partition } : {}),
    ...(p.maxUnhealthy !== undefined ? { maxUnhealthy: p.maxUnhealthy } : {}),
    ...(p.unhealthyRange !== undefined ? { unhealthyRange: p.unhealthyRange } : {}),
    ...(p.autoRepair !== undefined ? { autoRepair: p.autoRepair } : {}),
    ...(p.remediation !== undefined ? { remediation: p.remediation } : {}),
    settings: p.settings, by: operatorOf(ctx),
  });
  const remediation = view.partitions.find((x) => x.partition === p.partition)?.remediation;
  ctx.logger.info({ partition: p.partition ?? '(global)', settings: p.settings, maxUnhealthy: p.maxUnhealthy, unhealthyRange: p.unhealthyRange, autoRepair: p.autoRepair, ...(p.remediation ? { remediation } : {}) }, 'HA configuration changed');
  return configurationsXml(view);
}

export const configureHAForCluster = defineAction({ namespace: EUCA_NAMESPACE, parse: parseConfigureHAForCluster, run: runConfigureCluster });
