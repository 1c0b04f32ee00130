/**
 * euca-migrate-instances, euca-describe-migrations, euca-cancel-migration (built, and their bin/
 * wrappers) and the migration rows of euca-describe-nodes / euca-describe-instances, against an
 * in-process CLC on 127.0.12.2 over the fake Clusters: rows, stderr and exit codes. Commands run as
 * child processes, so their stdout is a pipe: --wait prints a row per state change.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLC_PATH } from '../../clc/api/app.js';
import { ensureBuilt } from './buildOnce.js';
import { lines, runBuiltCli, type CliRun } from './cliRunner.js';
import { FakeClusters } from './fakeClusters.js';
import { harness, launchRunning, type Harness } from './harness.js';

const HOST = '127.0.12.2';
const CREATED = '2013-06-01T12:00:00.000Z';

let h: Harness;
let server: Server;
let url: string;

function cli(file: string, args: string[]): Promise<CliRun> {
  return runBuiltCli(file, args, { EC2_URL: url });
}

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

beforeEach(async () => {
  h = await harness({
    clusters: new FakeClusters({
      cluster01: [{ host: '127.0.12.11' }, { host: '127.0.12.12' }, { host: '127.0.12.13' }],
      cluster02: [{ host: '127.0.12.21' }],
    }),
  });
  server = await new Promise<Server>((resolve) => { const s = h.app.listen(0, HOST, () => resolve(s)); });
  url = `http://${HOST}:${(server.address() as AddressInfo).port}${CLC_PATH}`;
  return async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
});

const migrateCall = () => h.clusters.calls.filter((c) => c.op === 'ccMigrateInstances').at(-1)?.req;

describe('euca-migrate-instances', () => {
  it('-s drains a node: MIGRATION row, then one INSTANCE row per instance', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'c1.medium', 2);
    const r = await cli('migrateInstances', ['-s', '127.0.12.11']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tdrain\tactive\t${CREATED}`,
      `INSTANCE\t${a}\t127.0.12.12\tqueued\t\t\t\t\t`,
      `INSTANCE\t${b}\t127.0.12.12\tqueued\t\t\t\t\t`,
    ]);
    expect(migrateCall()).toMatchObject({ sourceHost: '127.0.12.11', destinations: [], allowHosts: true, reserveDestinations: false, partial: false });
  });

  it('-i with --include-dest, --reserve-destinations', async () => {
    const [a] = await launchRunning(h, 'cluster01');
    const r = await cli('migrateInstances', ['-i', a as string, '--include-dest', '127.0.12.13', '127.0.12.12', '--reserve-destinations']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)[1]).toBe(`INSTANCE\t${a}\t127.0.12.12\tqueued\t\t\t\t\t`);
    expect(migrateCall()).toMatchObject({ instanceId: a, destinations: ['127.0.12.13', '127.0.12.12'], allowHosts: true, reserveDestinations: true });
  });

  it('--exclude-dest forbids hosts; --partial prints UNPLACED rows with the reason', async () => {
    const onSource = await launchRunning(h, 'cluster01', 'c1.medium', 2);
    await launchRunning(h, 'cluster01', 'c1.medium'); // .12 keeps room for one
    const r = await cli('migrateInstances', ['-s', '127.0.12.11', '--exclude-dest', '127.0.12.13', '--partial']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).slice(1)).toEqual([
      `INSTANCE\t${onSource[0]}\t127.0.12.12\tqueued\t\t\t\t\t`,
      `INSTANCE\t${onSource[1]}\t\tfailed\t\t\t\t\tnot placed: insufficient-capacity`,
      `UNPLACED\t${onSource[1]}\tinsufficient-capacity`,
    ]);
    expect(migrateCall()).toMatchObject({ destinations: ['127.0.12.13'], allowHosts: false, partial: true });
  });

  it.each([
    ['both -s and -i', ['-s', '127.0.12.11', '-i', 'i-00000001'], /cannot be used with/],
    ['neither -s nor -i', ['--partial'], /^error: give exactly one of -s SOURCE and -i INSTANCE$/m],
    ['both include and exclude', ['-s', '127.0.12.11', '--include-dest', '127.0.12.12', '--exclude-dest', '127.0.12.13'], /cannot be used with/],
    ['a poll interval that is not one', ['-s', '127.0.12.11', '--wait', '--poll-ms', 'fast'], /milliseconds/],
  ])('usage error: %s exits non-zero without calling the cloud', async (_n, args, re) => {
    const r = await cli('migrateInstances', args);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(re);
    expect(h.clusters.calls).toEqual([]);
  });

  it('a refusal prints CODE: message and exits 1', async () => {
    await launchRunning(h, 'cluster01');
    expect((await cli('migrateInstances', ['-s', '127.0.12.11'])).code).toBe(0);
    const r = await cli('migrateInstances', ['-s', '127.0.12.11']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('MigrationInProgress: node 127.0.12.11 is already being migrated by mig-00000001\n');
  });

  it('--wait on a non-terminal prints a row per state change and exits 0 once every instance completed', async () => {
    const [a] = await launchRunning(h, 'cluster01', 'm1.medium');
    h.clusters.autoAdvance = true;
    const r = await cli('migrateInstances', ['-i', a as string, '--wait', '--poll-ms', '10']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tinstance\tactive\t${CREATED}`,
      `INSTANCE\t${a}\t127.0.12.12\tqueued\t\t\t\t\t`,
      `INSTANCE\t${a}\t127.0.12.12\tpreparing\t\t0ms\t\t\t`,
      `INSTANCE\t${a}\t127.0.12.12\tready\t\t1.0s\t\t\t`,
      `INSTANCE\t${a}\t127.0.12.12\tmigrating\t50%\t2.0s\t\t256.0MiB\t`,
      `INSTANCE\t${a}\t127.0.12.12\tcleaning\t100%\t3.0s\t\t512.0MiB\t`,
      `INSTANCE\t${a}\t127.0.12.12\tcompleted\t100%\t4.0s\t42ms\t512.0MiB\t`,
      `MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tinstance\tcompleted\t${CREATED}`,
    ]);
  });

  it('--wait exits 1 when an instance did not complete', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    h.clusters.autoAdvance = true;
    h.clusters.failing.add(b as string);
    const r = await cli('migrateInstances', ['-s', '127.0.12.11', '--wait', '--poll-ms', '10']);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.at(-1)).toBe(`MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tdrain\tincomplete\t${CREATED}`);
    expect(out).toContain(`INSTANCE\t${b}\t127.0.12.12\trolled-back\t50%\t3.0s\t\t128.0MiB\tdestination 127.0.12.12 stopped answering; rolled back`);
    expect(out.filter((l) => l.startsWith(`INSTANCE\t${a}\t`)).at(-1)).toMatch(/\tcompleted\t/);
  });

  it('--wait --json prints the finished migration as JSON, with the exit code', async () => {
    const [a] = await launchRunning(h, 'cluster01');
    h.clusters.autoAdvance = true;
    const r = await cli('migrateInstances', ['-i', a as string, '--wait', '--poll-ms', '10', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { migrationId: string; state: string; itemSet: { state: string }[] };
    expect([j.migrationId, j.state, j.itemSet.map((i) => i.state)]).toEqual(['mig-00000001', 'completed', ['completed']]);
  });
});

describe('euca-describe-migrations and euca-cancel-migration', () => {
  it('lists migrations with item progress, timings and errors; ids select; unknown ids exit 1', async () => {
    const [a] = await launchRunning(h, 'cluster01');
    await launchRunning(h, 'cluster02');
    await cli('migrateInstances', ['-i', a as string]);
    for (let i = 0; i < 3; i++) h.clusters.advanceMigrations();
    const r = await cli('describeMigrations', []);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tinstance\tactive\t${CREATED}`,
      `INSTANCE\t${a}\t127.0.12.12\tmigrating\t50%\t2.0s\t\t128.0MiB\t`,
    ]);

    const one = await cli('describeMigrations', ['MIG-00000001']);
    expect(lines(one.stdout)[0]).toMatch(/^MIGRATION\tmig-00000001\t/);
    const unknown = await cli('describeMigrations', ['mig-0000dead']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("InvalidMigrationID.NotFound: The migration IDs 'mig-0000dead' do not exist\n");
  });

  it('cancels, printing the migration as it now stands; a finished one exits 1', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    await cli('migrateInstances', ['-s', '127.0.12.11']);
    const r = await cli('cancelMigration', ['mig-00000001']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      `MIGRATION\tmig-00000001\tcluster01\t127.0.12.11\tdrain\tincomplete\t${CREATED}`,
      `INSTANCE\t${a}\t127.0.12.12\tcancelled\t\t\t\t\tcancelled by CancelMigration`,
      `INSTANCE\t${b}\t127.0.12.12\tcancelled\t\t\t\t\tcancelled by CancelMigration`,
    ]);
    const again = await cli('cancelMigration', ['mig-00000001']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('MigrationAlreadyFinished: migration mig-00000001 has already finished\n');
  });

  it('a malformed id exits 1 without calling a CC', async () => {
    const r = await cli('cancelMigration', ['12345']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^InvalidMigrationID\.Malformed: /);
    expect(h.clusters.calls).toEqual([]);
  });
});

describe('migration rows of the describe commands', () => {
  it('euca-describe-nodes shows INSTANCE id MIGRATING-TO destination beneath the source node', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    await cli('migrateInstances', ['-i', a as string, '--include-dest', '127.0.12.13']);
    const r = await cli('describeNodes', ['-p', 'cluster01']);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'NODE\tcluster01\t127.0.12.11\tENABLED\t2/4\t512/4096\t10/100',
      `INSTANCE\t${a}\tMIGRATING-TO\t127.0.12.13`,
      `INSTANCE\t${b}\trunning\tm1.small`,
      'NODE\tcluster01\t127.0.12.12\tENABLED\t0/4\t0/4096\t0/100',
      'NODE\tcluster01\t127.0.12.13\tENABLED\t0/4\t0/4096\t0/100',
    ]);
  });

  it('euca-describe-instances shows migration state, source and destination', async () => {
    const [a, b] = await launchRunning(h, 'cluster01', 'm1.small', 2);
    await cli('migrateInstances', ['-i', a as string]);
    h.clusters.advanceMigrations();
    const r = await cli('describeInstances', []);
    const rows = lines(r.stdout).filter((l) => l.startsWith('INSTANCE')).map((l) => l.split('\t'));
    expect(rows.map((c) => [c[1], ...c.slice(8)])).toEqual([[a, 'preparing', '127.0.12.11', '127.0.12.12'], [b, 'none', '', '']]);
  });
});

describe('bin wrappers', () => {
  it.each([
    ['euca-describe-migrations', []],
    ['euca-migrate-instances', ['-s', '127.0.12.13']],
    ['euca-cancel-migration', ['mig-0000dead']],
  ] as [string, string[]][])('bin/%s runs the built command', async (name, args) => {
    const r = await cli(`bin/${name}`, args);
    // The last two are refused by the cloud (nothing to migrate, no such migration): proof they reached it.
    if (name === 'euca-describe-migrations') expect([r.code, r.stderr]).toEqual([0, '']);
    else expect(r.stderr).toMatch(/^(NothingToMigrate|InvalidMigrationID\.NotFound): /);
  });
});
