/** CLC → CC operations (served at CC_PATH on port 8774). */
import { z } from 'zod';
import { ncInstanceSchema } from './ncProtocol.js';
import {
  hostSchema, instanceIdSchema, instanceStateSchema, nodeStateSchema, partitionSchema,
  reservationIdSchema, resourcesSchema, vmTypeSchema,
} from './common.js';

/** How the CC sees a node: the NC's own report plus reachability. */
export const ccNodeSchema = z.object({
  host: hostSchema,
  partition: partitionSchema,
  /** 'unknown' until the CC has heard from the NC since it started. */
  nodeState: z.union([nodeStateSchema, z.literal('unknown')]),
  reachable: z.boolean(),
  healthy: z.boolean(),
  /** Epoch ms of the last successful contact, 0 if none. */
  lastSeen: z.number(),
  capacity: resourcesSchema,
  used: resourcesSchema,
  instances: z.array(ncInstanceSchema),
});
export type CcNode = z.infer<typeof ccNodeSchema>;

export const ccInstanceSchema = ncInstanceSchema.extend({ host: hostSchema, partition: partitionSchema });
export type CcInstance = z.infer<typeof ccInstanceSchema>;

export const matrixRowSchema = z.object({
  vmType: z.string(), max: z.number().int(), available: z.number().int(),
  cores: z.number().int(), memoryMiB: z.number().int(), diskGiB: z.number().int(),
});

const vmTypes = z.array(vmTypeSchema).min(1);

export const CC_OPS = {
  /** Every registered node with its state, resources and instances (fresh from the CC's view). */
  ccDescribeNodes: {
    request: z.object({}),
    response: z.object({ partition: partitionSchema, nodes: z.array(ccNodeSchema) }),
  },
  /** The resource matrix for the given VM types. */
  ccDescribeResources: {
    request: z.object({ vmTypes }),
    response: z.object({ partition: partitionSchema, matrix: z.array(matrixRowSchema) }),
  },
  ccDescribeInstances: {
    request: z.object({}),
    response: z.object({ partition: partitionSchema, instances: z.array(ccInstanceSchema) }),
  },
  /**
   * Place and start up to instanceIds.length instances, at least minCount, on enabled nodes with
   * capacity. All-or-nothing below minCount: InsufficientInstanceCapacity and nothing started.
   */
  ccRunInstances: {
    request: z.object({
      reservationId: reservationIdSchema,
      imageId: z.string().min(1),
      ownerId: z.string().min(1),
      vmType: vmTypeSchema,
      instanceIds: z.array(instanceIdSchema).min(1),
      minCount: z.number().int().min(1),
      launchTime: z.number(),
    }),
    response: z.object({ instances: z.array(ccInstanceSchema) }),
  },
  ccTerminateInstances: {
    request: z.object({ instanceIds: z.array(instanceIdSchema).min(1) }),
    response: z.object({
      instances: z.array(z.object({ instanceId: instanceIdSchema, previousState: instanceStateSchema, currentState: instanceStateSchema })),
    }),
  },
  /** Maintenance mode for one node; answers after the NC has persisted the new state. */
  ccModifyNode: {
    request: z.object({ host: hostSchema, stateName: nodeStateSchema, vmTypes }),
    response: z.object({ previousState: nodeStateSchema, node: ccNodeSchema, matrix: z.array(matrixRowSchema) }),
  },
} as const;

export type CcOp = keyof typeof CC_OPS;
export type CcRequest<O extends CcOp> = z.infer<(typeof CC_OPS)[O]['request']>;
export type CcResponse<O extends CcOp> = z.infer<(typeof CC_OPS)[O]['response']>;

export { instanceIdSchema };
