/**
 * EnableHAForHost / DisableHAForHost (`Host`) and EnableHAForCluster / DisableHAForCluster
 * (`Partition`): the switches are stored, then each host's machine follows at once (DISABLED, or,
 * switched on, its eligibility evaluated right away). A host's HA runs only when its partition's is on.
 */
import { z } from 'zod';
import { hostSchema, partitionSchema } from '../../../shared/protocol/common.js';
import { requireZone } from '../../core/zones.js';
import { defineAction, type ActionContext } from '../action.js';
import { parseActionParams } from '../actionParams.js';
import type { ParamMap } from '../queryParams.js';
import { hostHaItem } from '../render/haItems.js';
import { EUCA_NAMESPACE, type XmlObject } from '../xmlResponse.js';
import { operatorOf, requireHa } from './haCommon.js';

const hostParams = z.strictObject({ Host: hostSchema });
const clusterParams = z.strictObject({ Partition: partitionSchema });

export function parseHostSwitch(params: ParamMap): Readonly<z.infer<typeof hostParams>> {
  return parseActionParams(hostParams, params);
}

export function parseClusterSwitch(params: ParamMap): Readonly<z.infer<typeof clusterParams>> {
  return parseActionParams(clusterParams, params);
}

function hostSwitch(enabled: boolean) {
  return async (p: Readonly<z.infer<typeof hostParams>>, ctx: ActionContext): Promise<XmlObject> => {
    const view = await requireHa(ctx).setHostEnabled(p.Host, enabled, operatorOf(ctx));
    ctx.logger.info({ host: p.Host, enabled }, 'host HA switched');
    return { host: hostHaItem(view) };
  };
}

function clusterSwitch(enabled: boolean) {
  return async (p: Readonly<z.infer<typeof clusterParams>>, ctx: ActionContext): Promise<XmlObject> => {
    requireZone(ctx.clusters, p.Partition);
    const views = await requireHa(ctx).setClusterEnabled(p.Partition, enabled, operatorOf(ctx));
    ctx.logger.info({ partition: p.Partition, enabled }, 'partition HA switched');
    return { partition: p.Partition, enabled, hostSet: views.map(hostHaItem) };
  };
}

export const enableHAForHost = defineAction({ namespace: EUCA_NAMESPACE, parse: parseHostSwitch, run: hostSwitch(true) });
export const disableHAForHost = defineAction({ namespace: EUCA_NAMESPACE, parse: parseHostSwitch, run: hostSwitch(false) });
export const enableHAForCluster = defineAction({ namespace: EUCA_NAMESPACE, parse: parseClusterSwitch, run: clusterSwitch(true) });
export const disableHAForCluster = defineAction({ namespace: EUCA_NAMESPACE, parse: parseClusterSwitch, run: clusterSwitch(false) });
