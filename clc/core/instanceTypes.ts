/**
 * DescribeInstanceTypes, pure: the CLC's VM type table read as EC2 describes instance types, its
 * filters, the order it lists and pages in, and each type's capacity per zone from the CCs' resource
 * matrices. Every fact comes from the table (cores, memory, disk) or from INSTANCE_TYPE_DEFAULTS,
 * which says for each cloud-wide value where it comes from; nothing else is claimed.
 */
import type { VmType } from '../../shared/model/vmTypes.js';
import { filterNamesOf, filterPredicate, type NamedFilter } from './instanceFilters.js';
import { byCodeUnits } from './instanceView.js';
import type { MatrixRowLike } from './matrixText.js';

/**
 * What every type of a Ferry cloud shares, with its source (docs/API.md lists them). EC2's fields
 * that Ferry cannot derive (hypervisor, clock speed, disk technology, EBS figures) are not answered.
 */
export const INSTANCE_TYPE_DEFAULTS = Object.freeze({
  /** The table is everything the cloud offers: there is no older generation to tell apart. */
  currentGeneration: true,
  /** A private cloud bills nothing, so nothing is free-tier. */
  freeTierEligible: false,
  /** RunInstances launches on demand; Ferry has no spot market. */
  usageClasses: Object.freeze(['on-demand']),
  /** The type's disk is node-local (counted against the node's disk); Ferry has no EBS. */
  rootDeviceTypes: Object.freeze(['instance-store']),
  /** nc/hypervisor/libvirt/domainXml.ts: every guest is `<type arch='x86_64'>hvm</type>`. */
  virtualizationTypes: Object.freeze(['hvm']),
  architectures: Object.freeze(['x86_64']),
  /** Instances are guests of a hypervisor, never a whole host. */
  bareMetal: false,
  /** One disk per type: the table has one disk size, and a guest gets no other. */
  disks: 1,
  /** Ferry's guests get no network device (domainXml.ts) and the table has no NIC column. */
  networkInterfaces: 0,
  /** Placement counts each vCPU as the instance's own (shared/model/resources.ts): no CPU credits. */
  burstablePerformance: false,
  /** There is no hibernate (StopInstances) and no dedicated-host API. */
  hibernation: false,
  dedicatedHosts: false,
});

/** EC2's instance storage is in GB (10^9 bytes); the table's disks are GiB (2^30). */
const BYTES_PER_GIB = 1024 ** 3;
const BYTES_PER_GB = 1000 ** 3;

/** The table's disk as EC2's `totalSizeInGB`: rounded down, so the disk holds at least that much. */
export function diskSizeInGB(diskGiB: number): number {
  return Math.floor((diskGiB * BYTES_PER_GIB) / BYTES_PER_GB);
}

/** EC2's `instanceStorageInfo.totalSizeInGB`: the type's one disk, in GB. */
export function totalStorageGB(t: VmType): number {
  return diskSizeInGB(t.diskGiB) * INSTANCE_TYPE_DEFAULTS.disks;
}

/** Eucalyptus 4's order (VmType.compareTo): disk, memory, cores, then name; smallest first. */
export function compareVmTypes(a: VmType, b: VmType): number {
  return a.diskGiB - b.diskGiB || a.memoryMiB - b.memoryMiB || a.cores - b.cores || byCodeUnits(a.name, b.name);
}

/** How a filter's exact values are checked, so a value no type can ever have is refused, not matched against nothing. */
type FilterValues =
  | { readonly kind: 'text' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'count' }
  | { readonly kind: 'oneOf'; readonly values: readonly string[] };

interface InstanceTypeFilterSpec {
  readonly values: FilterValues;
  readonly offered: (t: VmType) => readonly string[];
}

const D = INSTANCE_TYPE_DEFAULTS;
const text = (offered: (t: VmType) => string): InstanceTypeFilterSpec => ({ values: { kind: 'text' }, offered: (t) => [offered(t)] });
const flag = (holds: boolean): InstanceTypeFilterSpec => ({ values: { kind: 'boolean' }, offered: () => [String(holds)] });
const count = (n: (t: VmType) => number): InstanceTypeFilterSpec => ({ values: { kind: 'count' }, offered: (t) => [String(n(t))] });
/** `ec2Values` are every value EC2 documents for the filter (botocore's enum), whether Ferry has it or not. */
const oneOf = (ec2Values: readonly string[], offered: readonly string[]): InstanceTypeFilterSpec => ({ values: { kind: 'oneOf', values: ec2Values }, offered: () => offered });

/** EC2's DescribeInstanceTypes filters over the fields Ferry answers (clc/api/render/instanceTypeItems.ts). */
export const INSTANCE_TYPE_FILTERS = Object.freeze({
  'instance-type': text((t) => t.name),
  'current-generation': flag(D.currentGeneration),
  'free-tier-eligible': flag(D.freeTierEligible),
  'bare-metal': flag(D.bareMetal),
  'burstable-performance-supported': flag(D.burstablePerformance),
  'hibernation-supported': flag(D.hibernation),
  'instance-storage-supported': flag(true),
  'supported-usage-class': oneOf(['on-demand', 'spot'], D.usageClasses),
  'supported-root-device-type': oneOf(['ebs', 'instance-store'], D.rootDeviceTypes),
  'supported-virtualization-type': oneOf(['hvm', 'paravirtual'], D.virtualizationTypes),
  'processor-info.supported-architecture': oneOf(['i386', 'x86_64', 'arm64', 'x86_64_mac', 'arm64_mac'], D.architectures),
  'vcpu-info.default-vcpus': count((t) => t.cores),
  'memory-info.size-in-mib': count((t) => t.memoryMiB),
  'instance-storage-info.total-size-in-gb': count(totalStorageGB),
  'instance-storage-info.disk.size-in-gb': count((t) => diskSizeInGB(t.diskGiB)),
  'instance-storage-info.disk.count': count(() => D.disks),
  'network-info.maximum-network-interfaces': count(() => D.networkInterfaces),
} satisfies Record<string, InstanceTypeFilterSpec>);

export type InstanceTypeFilterName = keyof typeof INSTANCE_TYPE_FILTERS;
export const { names: INSTANCE_TYPE_FILTER_NAMES, isName: isInstanceTypeFilterName } = filterNamesOf(INSTANCE_TYPE_FILTERS);

export type InstanceTypeFilter = NamedFilter<InstanceTypeFilterName>;

/** True when `value` holds an unescaped `*` or `?`: a pattern, matched rather than checked. */
function isPattern(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === '*' || value[i] === '?') return true;
  }
  return false;
}

/**
 * Why `value` can never match filter `name`, or undefined. EC2 compares filter values case-sensitively,
 * so `True` is refused rather than silently matching nothing.
 */
export function invalidInstanceTypeFilterValue(name: InstanceTypeFilterName, value: string): string | undefined {
  const spec: InstanceTypeFilterSpec = INSTANCE_TYPE_FILTERS[name];
  if (isPattern(value)) return undefined;
  switch (spec.values.kind) {
    case 'text': return undefined;
    case 'boolean': return value === 'true' || value === 'false' ? undefined : 'expected true or false';
    case 'count': return /^[0-9]+$/.test(value) ? undefined : 'expected a whole number';
    case 'oneOf': return spec.values.values.includes(value) ? undefined : `expected one of ${spec.values.values.join(', ')}`;
  }
}

export interface InstanceTypeSelection {
  /** InstanceType.N: only these (deduplicated); empty for every type. */
  readonly names: readonly string[];
  readonly filters: readonly InstanceTypeFilter[];
}

export type SelectedTypes =
  | { readonly ok: true; readonly types: readonly VmType[] }
  | { readonly ok: false; readonly unknown: readonly string[] };

/**
 * The types `selection` asks for, in compareVmTypes order; or every name the table does not have,
 * in the order asked (EC2 answers InvalidInstanceType naming them all).
 */
export function selectInstanceTypes(table: readonly VmType[], selection: InstanceTypeSelection): SelectedTypes {
  const known = new Set(table.map((t) => t.name));
  const unknown = selection.names.filter((n) => !known.has(n));
  if (unknown.length > 0) return { ok: false, unknown };
  const named = selection.names.length === 0 ? table : table.filter((t) => selection.names.includes(t.name));
  const chosen = named.filter(instanceTypeFilterPredicate(selection.filters));
  return { ok: true, types: [...chosen].sort(compareVmTypes) };
}

/** A predicate true for the types every filter accepts (EC2's OR within a filter, AND across, wildcards). */
export function instanceTypeFilterPredicate(filters: readonly InstanceTypeFilter[]): (t: VmType) => boolean {
  return filterPredicate(filters.map((f) => ({ offered: INSTANCE_TYPE_FILTERS[f.name].offered, values: f.values })));
}

/** What one zone can take of one type: Eucalyptus's VmTypeZoneStatus. */
export interface ZoneCapacity {
  readonly zoneName: string;
  /** Instances of the type that can start there now, on enabled nodes. */
  readonly available: number;
  /** What the zone's nodes hold of the type when empty. */
  readonly max: number;
}

/**
 * Each type's capacity in every zone that answered, zones in the order of `answers` (the order asked),
 * from the CCs' resource matrices. A zone that did not answer is not in `answers`, so it is absent
 * here, never a zero.
 */
export function capacityByType(types: readonly VmType[], answers: ReadonlyMap<string, readonly MatrixRowLike[]>): Map<string, ZoneCapacity[]> {
  const out = new Map<string, ZoneCapacity[]>(types.map((t) => [t.name, []]));
  for (const [zoneName, matrix] of answers) {
    for (const row of matrix) out.get(row.vmType)?.push({ zoneName, available: row.available, max: row.max });
  }
  return out;
}
