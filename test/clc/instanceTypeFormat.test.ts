/** euca-describe-instance-types' rows (clc/cli/instanceTypeFormat.ts): euca2ools' layout, its sums and its percentages. */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { instanceTypeLines, instanceTypeRow, uncountedZoneWarnings, usedPercent } from '../../clc/cli/instanceTypeFormat.js';
import type { Reading, VmTypeDetailsReading } from '../../clc/cli/responses.js';

const zone = (zoneName: string, available: number, max: number) => ({ zoneName, available, max });
const small: VmTypeDetailsReading = { name: 'm1.small', cpu: '1', memory: '256', disk: '5', networkInterfaces: '0', availability: [zone('cluster02', 8, 8), zone('cluster01', 2, 8)] };
const big: VmTypeDetailsReading = { name: 'cc2.8xlarge', cpu: '16', memory: '6144', disk: '120', networkInterfaces: '0', availability: [zone('cluster02', 0, 0), zone('cluster01', 0, 0)] };
const reading: Reading<'DescribeInstanceTypes'> = { instanceTypeDetails: [small, big], unavailablePartitionSet: [] };

describe('the table, as euca2ools prints it', () => {
  it('without capacity: name, CPUs, memory, disk, NICs, each column as wide as its header or widest value', () => {
    expect(instanceTypeLines(reading, { showCapacity: false, byZone: false })).toEqual([
      'INSTANCETYPE\tName         CPUs  Memory (MiB)  Disk (GiB)  NICs',
      'INSTANCETYPE\tm1.small        1           256           5     0',
      'INSTANCETYPE\tcc2.8xlarge    16          6144         120     0',
    ]);
  });

  it('--show-capacity: used / total over every zone, and used % (empty where nothing fits)', () => {
    expect(instanceTypeLines(reading, { showCapacity: true, byZone: false })).toEqual([
      'INSTANCETYPE\tName         CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %',
      'INSTANCETYPE\tm1.small        1           256           5     0     6 /    16     38%',
      'INSTANCETYPE\tcc2.8xlarge    16          6144         120     0     0 /     0        ',
    ]);
  });

  it('--by-zone: per zone in name order, its table, then a blank line', () => {
    expect(instanceTypeLines(reading, { showCapacity: true, byZone: true })).toEqual([
      'AVAILABILITYZONE\tcluster01',
      'INSTANCETYPE\tName         CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %',
      'INSTANCETYPE\tm1.small        1           256           5     0     6 /     8     75%',
      'INSTANCETYPE\tcc2.8xlarge    16          6144         120     0     0 /     0        ',
      '',
      'AVAILABILITYZONE\tcluster02',
      'INSTANCETYPE\tName         CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %',
      'INSTANCETYPE\tm1.small        1           256           5     0     0 /     8      0%',
      'INSTANCETYPE\tcc2.8xlarge    16          6144         120     0     0 /     0        ',
      '',
    ]);
  });

  it('a zone that did not answer is in no table, and named in a warning', () => {
    const one = { ...small, availability: [zone('cluster01', 2, 8)] };
    expect(instanceTypeLines({ instanceTypeDetails: [one], unavailablePartitionSet: [] }, { showCapacity: true, byZone: true })[0]).toBe('AVAILABILITYZONE\tcluster01');
    expect(uncountedZoneWarnings([{ partition: 'cluster02', reason: 'unreachable (ECONNREFUSED)' }])).toEqual([
      'warning: partition cluster02 did not answer; its capacity is not counted: unreachable (ECONNREFUSED)',
    ]);
  });

  it('no type: the header alone', () => {
    expect(instanceTypeLines({ instanceTypeDetails: [], unavailablePartitionSet: [] }, { showCapacity: false, byZone: false })).toEqual([
      'INSTANCETYPE\tName  CPUs  Memory (MiB)  Disk (GiB)  NICs',
    ]);
  });
});

describe('usedPercent', () => {
  it.each([[0, 0, ''], [0, 5, '0%'], [5, 5, '100%'], [1, 8, '12%'], [3, 8, '38%'], [1, 3, '33%'], [2, 3, '67%'], [1, 200, '0%'], [199, 200, '100%']])(
    '%i of %i is %j', (used, total, pct) => {
      expect(usedPercent(used, total)).toBe(pct);
    },
  );

  it('is what Python\'s \'{0:.0%}\'.format(float(used) / float(total)) prints', () => {
    const pairs = fc.sample(fc.integer({ min: 1, max: 5000 }).chain((total) => fc.tuple(fc.integer({ min: 0, max: total }), fc.constant(total))), { numRuns: 2000, seed: 47 });
    const ties = Array.from({ length: 400 }, (_, i): [number, number] => [2 * i + 1, 400 + 2 * i]);
    const all = [...pairs, ...ties];
    const python = execFileSync('/usr/bin/python3', ['-c', [
      'import json, sys',
      "print('\\n'.join('{0:.0%}'.format(float(u) / float(t)) for u, t in json.load(sys.stdin)))",
    ].join('\n')], { input: JSON.stringify(all), encoding: 'utf8' }).trim().split('\n');
    expect(all.map(([u, t]) => usedPercent(u, t))).toEqual(python);
  });
});

describe('the sums', () => {
  const zones = fc.uniqueArray(fc.tuple(fc.stringMatching(/^zone[0-9]{1,2}$/), fc.nat(300), fc.nat(300)), { selector: ([z]) => z, maxLength: 6 })
    .map((zs) => zs.map(([z, a, b]) => zone(z, Math.min(a, b), Math.max(a, b))));
  const types = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,2}[0-9]\.[a-z]{1,6}$/), fc.nat(64)), { selector: ([n]) => n, minLength: 1, maxLength: 8 });

  it('a type\'s used and total are its zones\' sums, and the per-zone tables add up to them', () => {
    fc.assert(fc.property(types, zones, (ts, zs) => {
      const details = ts.map(([name, cpu]): VmTypeDetailsReading => ({ name, cpu: String(cpu), memory: '1', disk: '1', networkInterfaces: '0', availability: zs }));
      const all = details.map((t) => instanceTypeRow(t));
      for (const row of all) {
        expect(row.total).toBe(zs.reduce((s, z) => s + z.max, 0));
        expect(row.used).toBe(zs.reduce((s, z) => s + z.max - z.available, 0));
        expect(row.used).toBeGreaterThanOrEqual(0);
        expect(row.used).toBeLessThanOrEqual(row.total);
      }
      const perZone = zs.map((z) => details.map((t) => instanceTypeRow(t, [z])));
      details.forEach((_, i) => {
        expect(perZone.reduce((s, rows) => s + (rows[i]?.used ?? 0), 0)).toBe(all[i]?.used);
        expect(perZone.reduce((s, rows) => s + (rows[i]?.total ?? 0), 0)).toBe(all[i]?.total);
      });
      const lines = instanceTypeLines({ instanceTypeDetails: details, unavailablePartitionSet: [] }, { showCapacity: true, byZone: true });
      expect(lines).toHaveLength(zs.length * (details.length + 3));
    }));
  });
});
