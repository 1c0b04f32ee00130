/**
 * DescribeInstanceTypes' items in its two vocabularies: Eucalyptus 4's VmTypeDetails (with its
 * VmTypeZoneStatus `availability` items when asked) and EC2's InstanceTypeInfo. Each value is the
 * VM type table's or a default of clc/core/instanceTypes.ts.
 */
import { diskSizeInGB, INSTANCE_TYPE_DEFAULTS as D, totalStorageGB, type ZoneCapacity } from '../../core/instanceTypes.js';
import type { VmType } from '../../../shared/model/vmTypes.js';
import type { XmlObject } from '../xmlResponse.js';

/** An `instanceTypeDetails` item, element order as Eucalyptus 4 binds it (euca-instance-types.xml). */
export function vmTypeDetailsItem(t: VmType, availability?: readonly ZoneCapacity[]): XmlObject {
  return {
    name: t.name,
    cpu: t.cores,
    // Eucalyptus's disk and memory are the table's units, GiB and MiB (euca2ools prints them so).
    disk: t.diskGiB,
    memory: t.memoryMiB,
    networkInterfaces: D.networkInterfaces,
    availability: availability?.map((z) => ({ name: t.name, zoneName: z.zoneName, max: z.max, available: z.available })),
  };
}

/** An `instanceTypeSet` item: the InstanceTypeInfo members Ferry can answer, in botocore's order. */
export function instanceTypeInfoItem(t: VmType): XmlObject {
  return {
    instanceType: t.name,
    currentGeneration: D.currentGeneration,
    freeTierEligible: D.freeTierEligible,
    supportedUsageClasses: D.usageClasses,
    supportedRootDeviceTypes: D.rootDeviceTypes,
    supportedVirtualizationTypes: D.virtualizationTypes,
    bareMetal: D.bareMetal,
    processorInfo: { supportedArchitectures: D.architectures },
    vCpuInfo: { defaultVCpus: t.cores },
    memoryInfo: { sizeInMiB: t.memoryMiB },
    instanceStorageSupported: true,
    instanceStorageInfo: { totalSizeInGB: totalStorageGB(t), disks: [{ sizeInGB: diskSizeInGB(t.diskGiB), count: D.disks }] },
    networkInfo: { maximumNetworkInterfaces: D.networkInterfaces },
    hibernationSupported: D.hibernation,
    burstablePerformanceSupported: D.burstablePerformance,
    dedicatedHostsSupported: D.dedicatedHosts,
  };
}
