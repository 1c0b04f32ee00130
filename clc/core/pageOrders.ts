/** The orders DescribeInstances, DescribeTags and DescribeInstanceTypes page in, with their cursors' JSON form (clc/core/paging.ts). */
import { z } from 'zod';
import type { VmType } from '../../shared/model/vmTypes.js';
import { compareVmTypes } from './instanceTypes.js';
import { compareViews, type InstanceOrderKey, type InstanceView } from './instanceView.js';
import type { PageOrder } from './paging.js';
import { compareResourceTags, type ResourceTag } from './resourceTags.js';
import { compareVolumes, type VolumeRecord } from './volumeRecords.js';

/** A page order whose cursor travels as a JSON tuple, read back only when `tuple` accepts it. */
function tupleOrder<T, K, J>(tuple: z.ZodType<J>, o: {
  keyOf(item: T): K;
  compare(a: K, b: K): number;
  toTuple(key: K): J;
  fromTuple(json: J): K;
}): PageOrder<T, K> {
  return Object.freeze({
    keyOf: o.keyOf,
    compare: o.compare,
    writeKey: o.toTuple,
    readKey: (json: unknown): K | undefined => {
      const r = tuple.safeParse(json);
      return r.success ? o.fromTuple(r.data) : undefined;
    },
  });
}

/** Launch time, reservation, launch index, instance id: the order DescribeInstances lists in. */
export const INSTANCE_PAGE_ORDER = tupleOrder<InstanceView, InstanceOrderKey, [number, string, number, string]>(
  z.tuple([z.number(), z.string(), z.number(), z.string()]), {
    keyOf: (v) => ({ launchTime: v.launchTime, reservationId: v.reservationId, launchIndex: v.launchIndex, instanceId: v.instanceId }),
    compare: compareViews,
    toTuple: (k) => [k.launchTime, k.reservationId, k.launchIndex, k.instanceId],
    fromTuple: ([launchTime, reservationId, launchIndex, instanceId]) => ({ launchTime, reservationId, launchIndex, instanceId }),
  },
);

type TagKey = Pick<ResourceTag, 'resourceId' | 'key'>;

/** Resource id, then tag key. */
export const TAG_PAGE_ORDER = tupleOrder<ResourceTag, TagKey, [string, string]>(z.tuple([z.string(), z.string()]), {
  keyOf: (t) => ({ resourceId: t.resourceId, key: t.key }),
  compare: compareResourceTags,
  toTuple: (k) => [k.resourceId, k.key],
  fromTuple: ([resourceId, key]) => ({ resourceId, key }),
});

/** Disk, memory, cores, name: Eucalyptus's order of VM types (compareVmTypes). */
export const INSTANCE_TYPE_PAGE_ORDER = tupleOrder<VmType, VmType, [number, number, number, string]>(
  z.tuple([z.number(), z.number(), z.number(), z.string()]), {
    keyOf: (t) => ({ name: t.name, cores: t.cores, memoryMiB: t.memoryMiB, diskGiB: t.diskGiB }),
    compare: compareVmTypes,
    toTuple: (k) => [k.diskGiB, k.memoryMiB, k.cores, k.name],
    fromTuple: ([diskGiB, memoryMiB, cores, name]) => ({ name, cores, memoryMiB, diskGiB }),
  },
);

type VolumeKey = Pick<VolumeRecord, 'createTime' | 'volumeId'>;

/** Create time, then volume id: the order DescribeVolumes lists in. */
export const VOLUME_PAGE_ORDER = tupleOrder<VolumeRecord, VolumeKey, [number, string]>(z.tuple([z.number(), z.string()]), {
  keyOf: (v) => ({ createTime: v.createTime, volumeId: v.volumeId }),
  compare: compareVolumes,
  toTuple: (k) => [k.createTime, k.volumeId],
  fromTuple: ([createTime, volumeId]) => ({ createTime, volumeId }),
});
