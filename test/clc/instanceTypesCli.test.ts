/**
 * euca-describe-instance-types (built, and its bin/ wrapper) against an in-process CLC on 127.0.12.3
 * over the fake Clusters: euca2ools' table, capacity totals and per-zone tables, stderr and exit codes.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from './buildOnce.js';
import { lines, runBuiltCli, serveForCli, type CliRun } from './cliRunner.js';
import { harness, launchRunning, type Harness } from './harness.js';

const HOST = '127.0.12.3';
const HEADER = 'INSTANCETYPE\tName         CPUs  Memory (MiB)  Disk (GiB)  NICs';
const CAPACITY_HEADER = `${HEADER}  Used / Total  Used %`;

let h: Harness;
let url: string;

function cli(args: string[], file = 'describeInstanceTypes'): Promise<CliRun> {
  return runBuiltCli(file, args, { EC2_URL: url });
}

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

beforeEach(async () => {
  h = await harness();
  const served = await serveForCli(h.app, HOST);
  url = served.url;
  return served.close;
});

describe('euca-describe-instance-types', () => {
  it('lists every type: name, CPUs, memory, disk, NICs, smallest first', async () => {
    const r = await cli([]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const out = lines(r.stdout);
    expect(out).toHaveLength(18);
    expect(out.slice(0, 3)).toEqual([
      HEADER,
      'INSTANCETYPE\tm1.small        1           256           5     0',
      'INSTANCETYPE\tt1.micro        1           256           5     0',
    ]);
    expect(out.at(-1)).toBe('INSTANCETYPE\tcr1.8xlarge    16         16384         240     0');
  });

  it('--show-capacity: used / total and used % over every zone', async () => {
    await launchRunning(h, 'cluster01', 'm1.large', 3);
    h.clusters.calls.length = 0;
    const r = await cli(['m1.large', 'm1.small', '--show-capacity']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    // m1.large: 3 of cluster01's 4 and none of cluster02's 4; m1.small: 6 of 8, 0 of 8.
    expect(lines(r.stdout)).toEqual([
      'INSTANCETYPE\tName      CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %',
      'INSTANCETYPE\tm1.small     1           256           5     0     6 /    16     38%',
      'INSTANCETYPE\tm1.large     2           512          10     0     3 /     8     38%',
    ]);
    expect(h.clusters.calls.map((c) => `${c.partition} ${c.op}`)).toEqual(['cluster01 ccDescribeResources', 'cluster02 ccDescribeResources']);
  });

  it('--by-zone: a table per zone; a zone that does not answer is a warning on stderr, and the exit is 0', async () => {
    h.clusters.down.add('cluster02');
    const r = await cli(['m1.small', '--by-zone']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: partition cluster02 did not answer; its capacity is not counted: .*unreachable/);
    expect(lines(r.stdout)).toEqual([
      'AVAILABILITYZONE\tcluster01',
      'INSTANCETYPE\tName      CPUs  Memory (MiB)  Disk (GiB)  NICs  Used / Total  Used %',
      'INSTANCETYPE\tm1.small     1           256           5     0     0 /     8      0%',
    ]);
  });

  it('--json prints the parsed answer', async () => {
    const r = await cli(['t1.micro', '--json', '--show-capacity']);
    expect(JSON.parse(r.stdout)).toEqual({
      instanceTypeDetails: [{
        name: 't1.micro', cpu: '1', memory: '256', disk: '5', networkInterfaces: '0',
        availability: [{ zoneName: 'cluster01', available: 8, max: 8 }, { zoneName: 'cluster02', available: 8, max: 8 }],
      }],
      unavailablePartitionSet: [],
    });
  });

  it('an unknown type is the cloud\'s coded error and exit 1', async () => {
    const r = await cli(['m1.small', 'x1.huge']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^InvalidInstanceType: The following supplied instance types do not exist: \[x1\.huge\]/);
  });

  it('bin/euca-describe-instance-types runs the built command', async () => {
    const r = await cli(['--show-capacity'], 'bin/euca-describe-instance-types');
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(lines(r.stdout)[0]).toBe(CAPACITY_HEADER);
  });
});
