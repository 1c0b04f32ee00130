/**
 * euca-describe-instance-types' output, as euca2ools 3 prints it (euca2ools/commands/ec2/
 * describeinstancetypes.py, print_result and _print_vmtypes): `INSTANCETYPE\t` then columns aligned
 * with spaces, each as wide as its header or widest value:
 *   INSTANCETYPE	Name      CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %
 *   INSTANCETYPE	m1.small     1           256           5     0     6 /    16     38%
 * Capacity columns with --show-capacity; --by-zone prints `AVAILABILITYZONE\tzone`, that zone's
 * table and a blank line, per zone in name order. Pure: readings in, lines out.
 */
import { byCodeUnits } from '../core/instanceView.js';
import type { Reading, UnavailableReading, VmTypeDetailsReading } from './responses.js';

/** One row of the table: a type, with its capacity over the zones counted. */
export interface InstanceTypeRow {
  readonly name: string;
  readonly cpu: string;
  readonly memory: string;
  readonly disk: string;
  readonly nics: string;
  /** max − available: instances of the type the zones have room for no more. */
  readonly used: number;
  /** Sum of the zones' max. */
  readonly total: number;
}

export interface InstanceTypeView {
  readonly showCapacity: boolean;
  readonly byZone: boolean;
}

const HEADERS = { name: 'Name', cpu: 'CPUs', memory: 'Memory (MiB)', disk: 'Disk (GiB)', nics: 'NICs', used: 'Used', total: 'Total', usedPct: 'Used %' } as const;
type Column = keyof typeof HEADERS;
type Cells = Record<Column, string>;

/** `'{0:.0%}'.format(used / total)` in Python: the quotient times 100 (a double), rounded half to even; '' when total is 0. */
export function usedPercent(used: number, total: number): string {
  if (total === 0) return '';
  const scaled = (used / total) * 100;
  const whole = Math.floor(scaled);
  const fraction = scaled - whole;
  return `${fraction > 0.5 || (fraction === 0.5 && whole % 2 !== 0) ? whole + 1 : whole}%`;
}

/** A type's row over the given zones' capacity (all of its zones, or the one zone of --by-zone). */
export function instanceTypeRow(t: VmTypeDetailsReading, zones: VmTypeDetailsReading['availability'] = t.availability): InstanceTypeRow {
  const total = zones.reduce((s, z) => s + z.max, 0);
  const available = zones.reduce((s, z) => s + z.available, 0);
  return { name: t.name, cpu: t.cpu, memory: t.memory, disk: t.disk, nics: t.networkInterfaces, used: total - available, total };
}

function cellsOf(r: InstanceTypeRow): Cells {
  return { name: r.name, cpu: r.cpu, memory: r.memory, disk: r.disk, nics: r.nics, used: String(r.used), total: String(r.total), usedPct: usedPercent(r.used, r.total) };
}

/** The header line and one line per row, every column as wide as its widest cell. */
export function instanceTypeTable(rows: readonly InstanceTypeRow[], showCapacity: boolean): string[] {
  const cells = rows.map(cellsOf);
  const width = (c: Column): number => Math.max(HEADERS[c].length, ...cells.map((x) => x[c].length));
  const line = (x: Cells): string => {
    const base = `${x.name.padEnd(width('name'))}  ${x.cpu.padStart(width('cpu'))}  ${x.memory.padStart(width('memory'))}  ${x.disk.padStart(width('disk'))}  ${x.nics.padStart(width('nics'))}`;
    const capacity = showCapacity ? `  ${x.used.padStart(width('used'))} / ${x.total.padStart(width('total'))}  ${x.usedPct.padStart(width('usedPct'))}` : '';
    return `INSTANCETYPE\t${base}${capacity}`;
  };
  return [line(HEADERS), ...cells.map(line)];
}

/** The whole output: one table over every zone, or with --by-zone one per zone that answered. */
export function instanceTypeLines(r: Reading<'DescribeInstanceTypes'>, view: InstanceTypeView): string[] {
  const types = r.instanceTypeDetails;
  if (!view.byZone) return instanceTypeTable(types.map((t) => instanceTypeRow(t)), view.showCapacity);
  const zones = [...new Set(types.flatMap((t) => t.availability.map((z) => z.zoneName)))].sort(byCodeUnits);
  return zones.flatMap((zone) => [
    `AVAILABILITYZONE\t${zone}`,
    ...instanceTypeTable(types.flatMap((t) => {
      const here = t.availability.filter((z) => z.zoneName === zone);
      return here.length > 0 ? [instanceTypeRow(t, here)] : [];
    }), view.showCapacity),
    '',
  ]);
}

/** Zones whose CC did not answer: their room is in no total above. */
export function uncountedZoneWarnings(u: UnavailableReading): string[] {
  return u.map((p) => `warning: partition ${p.partition} did not answer; its capacity is not counted: ${p.reason}`);
}
