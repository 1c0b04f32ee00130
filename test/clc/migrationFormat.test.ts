/** The CLI's migration rows, units, node rows and --wait displays, without a server. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { nodeLines } from '../../clc/cli/format.js';
import { formatBytes, formatDuration, migrationItemLine, migrationLines, percentDone } from '../../clc/cli/migrationFormat.js';
import { barDisplay, changedItems, lineDisplay } from '../../clc/cli/progressDisplay.js';
import { RESPONSES, type MigrationItemReading, type MigrationReading, type NodeReading } from '../../clc/cli/responses.js';

const MiB = 1024 * 1024;

function item(over: Partial<MigrationItemReading> = {}): MigrationItemReading {
  return {
    instanceId: 'i-0000000a', instanceType: 'm1.small', destination: '127.0.12.12', state: 'queued', attempts: 1, error: '',
    queuedAt: '2013-06-01T12:00:00.000Z', startedAt: '', endedAt: '', elapsedMs: undefined, progress: undefined, stats: undefined, ...over,
  };
}

function migration(items: MigrationItemReading[], state = 'active'): MigrationReading {
  return { migrationId: 'mig-00000001', partition: 'cluster01', sourceHost: '127.0.12.11', kind: 'drain', state, createdAt: '2013-06-01T12:00:00.000Z', itemSet: items };
}

describe('units', () => {
  it.each([[0, '0B'], [1023, '1023B'], [1024, '1.0KiB'], [1536, '1.5KiB'], [512 * MiB, '512.0MiB'], [3 * 1024 * MiB, '3.0GiB']])('formatBytes(%d) = %s', (n, s) => {
    expect(formatBytes(n)).toBe(s);
  });
  it.each([[0, '0ms'], [42, '42ms'], [999, '999ms'], [1000, '1.0s'], [12_345, '12.3s'], [59_949, '59.9s'], [125_000, '2m05s']])('formatDuration(%d) = %s', (n, s) => {
    expect(formatDuration(n)).toBe(s);
  });
});

describe('migration rows', () => {
  const rows: [string, MigrationItemReading, string][] = [
    ['queued', item(), 'INSTANCE\ti-0000000a\t127.0.12.12\tqueued\t\t\t\t\t'],
    ['migrating', item({ state: 'migrating', elapsedMs: 2500, progress: { bytesTotal: 256 * MiB, bytesTransferred: 64 * MiB, bytesRemaining: 192 * MiB, iteration: 1 } }),
      'INSTANCE\ti-0000000a\t127.0.12.12\tmigrating\t25%\t2.5s\t\t64.0MiB\t'],
    ['completed', item({ state: 'completed', elapsedMs: 4000, stats: { elapsedMs: 4000, downtimeMs: 42, bytesTransferred: 300 * MiB, iterations: 3 } }),
      'INSTANCE\ti-0000000a\t127.0.12.12\tcompleted\t100%\t4.0s\t42ms\t300.0MiB\t'],
    ['failed unplaced', item({ state: 'failed', destination: '', error: 'not placed: too-large' }), 'INSTANCE\ti-0000000a\t\tfailed\t\t\t\t\tnot placed: too-large'],
  ];
  it.each(rows)('%s', (_n, i, line) => {
    expect(migrationItemLine(i)).toBe(line);
  });

  it('progress never shows more than 100%, and nothing before the copy reports a size', () => {
    expect(percentDone(item({ state: 'migrating', progress: { bytesTotal: 10, bytesTransferred: 30, bytesRemaining: 0, iteration: 3 } }))).toBe('100%');
    expect(percentDone(item({ state: 'migrating', progress: { bytesTotal: 0, bytesTransferred: 0, bytesRemaining: 0, iteration: 0 } }))).toBe('');
  });

  it('a migration is its MIGRATION row and its items', () => {
    expect(migrationLines(migration([item()]))).toEqual([
      'MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tdrain\tactive\t2013-06-01T12:00:00.000Z',
      'INSTANCE\ti-0000000a\t127.0.12.12\tqueued\t\t\t\t\t',
    ]);
  });

  it('reads what the CLC sends (xml2js, one item)', () => {
    const doc = {
      migrationId: 'mig-00000001', partition: 'cluster01', sourceHost: '127.0.12.11', kind: 'instance', state: 'active', createdAt: 'x',
      itemSet: { item: { instanceId: 'i-0000000a', instanceType: 'm1.small', destination: '127.0.12.12', state: 'migrating', attempts: '1', queuedAt: 'q', elapsedMs: '5', progress: { bytesTotal: '4', bytesTransferred: '1', bytesRemaining: '3', iteration: '1' } } },
      unplacedSet: '', resourceMatrix: '',
    };
    const r = RESPONSES.MigrateInstances.parse(doc);
    expect(r.itemSet[0]).toMatchObject({ error: '', startedAt: '', elapsedMs: 5, progress: { bytesTotal: 4 } });
    expect(r.itemSet[0]?.stats).toBeUndefined();
    expect(r.unplacedSet).toEqual([]);
  });
});

describe('euca-describe-nodes rows', () => {
  const node = (instances: NodeReading['instancesSet']): NodeReading => ({
    partition: 'cluster01', host: '127.0.12.11', state: 'ENABLED',
    capacity: { cores: 4, memoryMiB: 4096, diskGiB: 100 }, used: { cores: 1, memoryMiB: 256, diskGiB: 5 },
    quarantined: false, quarantinedSince: '', quarantineReason: '', instancesSet: instances,
  });
  const inst = (id: string, migrationDestination = '', migrationSource = '') => ({
    instanceId: id, state: 'running', instanceType: 'm1.small', migrationState: migrationDestination ? 'migrating' : 'none', migrationSource, migrationDestination,
  });

  it('an instance leaving the node is MIGRATING-TO its destination; others keep their row', () => {
    expect(nodeLines(node([inst('i-0000000a', '127.0.12.12', '127.0.12.11'), inst('i-0000000b')]))).toEqual([
      'NODE\tcluster01\t127.0.12.11\tENABLED\t1/4\t256/4096\t5/100',
      'INSTANCE\ti-0000000a\tMIGRATING-TO\t127.0.12.12',
      'INSTANCE\ti-0000000b\trunning\tm1.small',
    ]);
  });

  it('on its destination an arriving instance keeps the plain row', () => {
    expect(nodeLines(node([inst('i-0000000a', '127.0.12.11', '127.0.12.13')]))[1]).toBe('INSTANCE\ti-0000000a\trunning\tm1.small');
  });
});

describe('--wait displays', () => {
  it('changedItems: only items whose state moved', () => {
    const seen = new Map([['i-0000000a', 'queued'], ['i-0000000b', 'migrating']]);
    const m = migration([item({ state: 'preparing' }), item({ instanceId: 'i-0000000b', state: 'migrating' }), item({ instanceId: 'i-0000000c' })]);
    expect(changedItems(seen, m).map((i) => i.instanceId)).toEqual(['i-0000000a', 'i-0000000c']);
  });

  it('lineDisplay prints a row per state change, never twice for one state', () => {
    const out: string[] = [];
    const d = lineDisplay((s) => out.push(s), migration([item()]));
    d.show(migration([item()]));
    d.show(migration([item({ state: 'preparing', elapsedMs: 0 })]));
    d.show(migration([item({ state: 'preparing', elapsedMs: 900 })]));
    d.show(migration([item({ state: 'completed', elapsedMs: 1000 })], 'completed'));
    d.stop();
    expect(out).toEqual([
      'INSTANCE\ti-0000000a\t127.0.12.12\tpreparing\t\t0ms\t\t\t\n',
      'INSTANCE\ti-0000000a\t127.0.12.12\tcompleted\t100%\t1.0s\t\t\t\n',
    ]);
  });

  it('barDisplay draws one bar per instance with its state and bytes on a terminal', async () => {
    let written = '';
    const tty = Object.assign(new Writable({ write(chunk, _enc, cb) { written += String(chunk); cb(); } }), { isTTY: true, columns: 160 });
    const d = await barDisplay(tty, migration([item(), item({ instanceId: 'i-0000000b' })]));
    d.show(migration([
      item({ state: 'migrating', progress: { bytesTotal: 256 * MiB, bytesTransferred: 128 * MiB, bytesRemaining: 128 * MiB, iteration: 1 } }),
      item({ instanceId: 'i-0000000b', state: 'failed', error: 'x' }),
    ]));
    d.stop();
    const plain = written.replace(/\x1B\[[0-9;?]*[A-Za-z]|\x1B[78]/g, '');
    expect(plain).toMatch(/i-0000000a 127\.0\.12\.12 \[.{16}\]\s+50% migrating 128\.0MiB\/256\.0MiB/);
    expect(plain).toMatch(/i-0000000b 127\.0\.12\.12 \[.{16}\]\s+0% failed/);
    for (const line of plain.split(/[\r\n]/)) expect(line.length).toBeLessThanOrEqual(80);
  });
});
