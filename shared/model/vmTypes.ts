import type { Resources } from './resources.js';

export interface VmType extends Resources {
  readonly name: string;
}

/** Eucalyptus 3.3's default VM types (euca-describe-instance-types), smallest first. */
export const DEFAULT_VM_TYPES: readonly VmType[] = Object.freeze([
  { name: 't1.micro', cores: 1, memoryMiB: 256, diskGiB: 5 },
  { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 },
  { name: 'm1.medium', cores: 1, memoryMiB: 512, diskGiB: 10 },
  { name: 'c1.medium', cores: 2, memoryMiB: 512, diskGiB: 10 },
  { name: 'm1.large', cores: 2, memoryMiB: 512, diskGiB: 10 },
  { name: 'm1.xlarge', cores: 2, memoryMiB: 1024, diskGiB: 10 },
  { name: 'c1.xlarge', cores: 2, memoryMiB: 2048, diskGiB: 10 },
  { name: 'm2.xlarge', cores: 2, memoryMiB: 2048, diskGiB: 10 },
  { name: 'm3.xlarge', cores: 4, memoryMiB: 2048, diskGiB: 15 },
  { name: 'm2.2xlarge', cores: 2, memoryMiB: 4096, diskGiB: 30 },
  { name: 'm3.2xlarge', cores: 4, memoryMiB: 4096, diskGiB: 30 },
  { name: 'cc1.4xlarge', cores: 8, memoryMiB: 3072, diskGiB: 60 },
  { name: 'm2.4xlarge', cores: 8, memoryMiB: 4096, diskGiB: 60 },
  { name: 'hi1.4xlarge', cores: 8, memoryMiB: 6144, diskGiB: 120 },
  { name: 'cc2.8xlarge', cores: 16, memoryMiB: 6144, diskGiB: 120 },
  { name: 'cg1.4xlarge', cores: 16, memoryMiB: 12288, diskGiB: 200 },
  { name: 'cr1.8xlarge', cores: 16, memoryMiB: 16384, diskGiB: 240 },
].map((t) => Object.freeze(t)));

export function findVmType(name: string, types: readonly VmType[] = DEFAULT_VM_TYPES): VmType | undefined {
  return types.find((t) => t.name === name);
}
