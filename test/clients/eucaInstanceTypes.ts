/**
 * euca2ools 3's `euca-describe-instance-types [TYPE...] [--show-capacity] [--by-zone]`, built as the
 * tool builds it and read as it reads it (requestbuilder.ts does the wire). Source, by line:
 *   EU = eucalyptus/euca2ools 6b3f62f, euca2ools/commands/ec2/describeinstancetypes.py
 * - ARGS (EU :33-39): `InstanceType` nargs='*' is routed to params, so the types go as InstanceType.N
 *   and none is [] (not sent); `--by-zone` has route_to=None (never sent); `--show-capacity` is
 *   dest='Availability', store_true, so Availability is always sent, `false` when not given.
 * - configure (EU :43-46): --by-zone sets params['Availability'] = True, but not args['Availability'],
 *   so --by-zone alone prints no capacity column (EU :121).
 * - LIST_TAGS (EU :40): instanceTypeDetails, availability.
 * - print_result (EU :48-75): per type its cpu, memory, disk, networkInterfaces as sent, and when
 *   params['Availability'] the sums over its `availability` items of int(available) and int(max),
 *   also kept per zone.
 */
import { get, list, text, type ToolDict } from './listDelimitedXml.js';
import type { RequestbuilderSession, ToolResponse, ToolService } from './requestbuilder.js';

export const LIST_INSTANCE_TYPES = ['instanceTypeDetails', 'availability'];

export interface EucaCapacity {
  readonly available: number;
  readonly max: number;
}

/** What print_result collects of one type before printing it. */
export interface EucaTypeInfo extends EucaCapacity {
  readonly name: string;
  readonly cpu: string | undefined;
  readonly memory: string | undefined;
  readonly disk: string | undefined;
  readonly nics: string | undefined;
}

export interface EucaInstanceTypes {
  /** Every type, in the order of the answer (vmtype_names). */
  readonly types: EucaTypeInfo[];
  /** zone → type → that zone's capacity (`zones` of print_result). */
  readonly zones: Map<string, Map<string, EucaCapacity>>;
}

export interface DescribeInstanceTypesOptions {
  readonly showCapacity?: boolean;
  readonly byZone?: boolean;
}

/** The params the command hands requestbuilder: InstanceType and Availability, after configure(). */
export function describeInstanceTypesParams(types: readonly string[], o: DescribeInstanceTypesOptions = {}): { InstanceType: string[]; Availability: boolean } {
  return { InstanceType: [...types], Availability: o.showCapacity === true || o.byZone === true };
}

export function describeInstanceTypes(session: RequestbuilderSession, ec2: ToolService, types: readonly string[] = [], o: DescribeInstanceTypesOptions = {}): Promise<ToolResponse> {
  return session.send(ec2, 'DescribeInstanceTypes', describeInstanceTypesParams(types, o), LIST_INSTANCE_TYPES);
}

/** Python's int() of a value the tool reads with `.get(key, 0)`: a missing one is 0. */
function int(v: ReturnType<typeof get>): number {
  if (v === undefined) return 0;
  const s = text(v);
  if (s === undefined || !/^\s*[-+]?\d+\s*$/.test(s)) throw new TypeError(`int(${JSON.stringify(v)}): the tool would die of a ValueError`);
  return Number.parseInt(s, 10);
}

/** print_result's vmtypes and zones (EU :49-72); `availability` is params['Availability']. */
export function readInstanceTypes(result: ToolDict, availability: boolean): EucaInstanceTypes {
  const types: EucaTypeInfo[] = [];
  const zones = new Map<string, Map<string, EucaCapacity>>();
  for (const vmtype of list(result.instanceTypeDetails)) {
    const name = text(get(vmtype, 'name')) ?? '';
    let available = 0;
    let max = 0;
    if (availability) {
      for (const zone of list(get(vmtype, 'availability'))) {
        const here = { available: int(get(zone, 'available')), max: int(get(zone, 'max')) };
        available += here.available;
        max += here.max;
        const zoneName = text(get(zone, 'zoneName')) ?? '';
        zones.set(zoneName, (zones.get(zoneName) ?? new Map<string, EucaCapacity>()).set(name, here));
      }
    }
    types.push({
      name, cpu: text(get(vmtype, 'cpu')), memory: text(get(vmtype, 'memory')), disk: text(get(vmtype, 'disk')),
      nics: text(get(vmtype, 'networkInterfaces')), available, max,
    });
  }
  return { types, zones };
}
