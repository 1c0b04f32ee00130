/**
 * Issue 19's `migration-libvirt` case: one live migration of a real guest on the libvirt lab
 * (scripts/libvirt-lab.sh: two libvirtd "hosts" on 127.0.93.3/.4, lab dir /tmp/ferry-lab-miglib), as
 * an administrator sees it end to end, against libvirt's own tool doing the same move.
 *   Ferry     `euca-migrate-instances -i ID --include-dest HOST --wait` (a process, as typed): CLC →
 *             CC → NCs over mutual TLS, the CC's per-migration credentials, the stream through the
 *             NCs' per-migration tunnels (docs/libvirt.md); timed from the command's start to its exit.
 *   baseline  `virsh migrate --live --p2p --tls --persistent --undefinesource` of a second guest of
 *             the same definition (same kernel, initrd, memory, vCPUs), between the same two libvirtd,
 *             QEMU's TLS with each host's own certificate in its migration TLS directory (made once,
 *             before the clock starts); timed from virsh's start to its exit.
 * Pairs alternate (Ferry, then virsh), each guest moving back the other way every time, so each
 * direction is alike for both; one pair first is not counted. Medians. The guest is the lab's tiny
 * Linux (128 MiB, booted: ~86 MiB to move) unless FERRY_BENCH_LIBVIRT_GUEST=firmware (64 MiB, no OS).
 * Everything on 127.0.93.0/24, ports 19750-19799. FERRY_BENCH_KEEP=1 keeps the cloud's logs.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { DomainSpec } from '../nc/hypervisor/driver.js';
import { LibvirtDriver } from '../nc/hypervisor/libvirt/libvirtDriver.js';
import { findVmType } from '../shared/model/vmTypes.js';
import { clcUrl, cloudLayout, ensureCloudPki, type CloudLayoutOptions } from '../scripts/cloudLayout.js';
import { spawnDaemon, stopPid, type RunningDaemon } from '../scripts/daemon.js';
import { libvirtCloudArgs } from '../scripts/libvirtCloud.js';
import { buildGuest, labLayout, startLab, stopLab, virsh } from '../scripts/libvirtLab.js';
import { adminCredentialsFile, adminQuery, describeInstance, items, placeOnFirst, until, type Doc } from './benchCloud.js';
import { BenchCa, writeHostTlsDir } from './libvirtBenchCa.js';
import { measured, skipped, type CaseResult } from './report.js';

const run = promisify(execFile);
const SUBNET = '127.0.93';
const CONTROLLER = `${SUBNET}.254`;
const HOSTS = [`${SUBNET}.3`, `${SUBNET}.4`] as const;
const LIBVIRT_PORT = 19750;
const TUNNEL = { port: 19751, local: 'host' as const, dataPorts: { min: 19760, max: 19799 } };
/** virsh's QEMU stream port on the destination (--migrateuri), one of a few so no two runs in a row share one. */
const VIRSH_STREAM_PORTS = [19752, 19753, 19754, 19755];
const LAB_DIR = '/tmp/ferry-lab-miglib';
const TYPE = 'm1.small';
const ROOT = resolve(import.meta.dirname, '..', '..');
const uri = (host: string): string => `qemu+tcp://${host}:${LIBVIRT_PORT}/system`;

const LABEL = 'migration-libvirt';
const median = (xs: readonly number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

export interface MigrationLibvirtResult {
  readonly ferryMs: number;
  readonly baselineMs: number;
  readonly pairs: number;
  readonly guest: 'linux' | 'firmware';
  /** Medians of libvirt's own job time, each side (Ferry's from DescribeMigrations, virsh's from domjobinfo). */
  readonly ferryJobMs: number;
  readonly baselineJobMs: number;
  readonly ferryMiB: number;
  readonly samples: { readonly ferry: number[]; readonly baseline: number[] };
}

/** Parses `virsh domjobinfo --completed` ("Time elapsed: 1234 ms", "Data processed: 86.4 MiB"). */
function jobInfo(text: string): { elapsedMs?: number } {
  const m = /Time elapsed:\s+(\d+)\s+ms/.exec(text);
  return m ? { elapsedMs: Number(m[1]) } : {};
}

export async function migrationLibvirt(pairs: number, guestKind: 'linux' | 'firmware'): Promise<MigrationLibvirtResult> {
  const lab = labLayout(LAB_DIR, { addrs: HOSTS, port: LIBVIRT_PORT });
  await startLab(lab);
  const baseDir = mkdtempSync(join(tmpdir(), 'ferry-bench-libvirt-'));
  const running: RunningDaemon[] = [];
  try {
    const guest = guestKind === 'linux' ? await buildGuest(lab) : undefined;
    const memoryCapMiB = guestKind === 'linux' ? 128 : 64;
    // libvirt's TLS for the baseline: each host's certificate (IP SAN = its address) in its migration TLS directory.
    const ca = new BenchCa();
    HOSTS.forEach((h, i) => writeHostTlsDir(lab.hosts[i]!.tlsDir, ca.host(h)));

    const layout: CloudLayoutOptions = {
      baseDir, controllerHost: CONTROLLER, nodeHosts: [...HOSTS],
      ...libvirtCloudArgs({ libvirtPort: LIBVIRT_PORT, guestMemoryCapMiB: memoryCapMiB, tunnel: TUNNEL, ...(guest ? { guest } : {}) }),
    };
    ensureCloudPki(layout);
    for (const s of cloudLayout(layout)) running.push(await spawnDaemon(s, { root: ROOT, logFile: join(baseDir, 'logs', `${s.name}.log`) }));
    const url = clcUrl(CONTROLLER);
    const q = adminQuery(LABEL, baseDir, url);
    const instanceId = await placeOnFirst(LABEL, q, HOSTS, TYPE);

    // The baseline's guest: the same definition as the NC makes (driver, size, kernel), on host 1
    // too. Its serial log tells when it has booted; Ferry's guest started before it.
    const vm = findVmType(TYPE)!;
    const spec: DomainSpec = { id: 'i-b0000001', imageId: 'emi-00000001', resources: { cores: vm.cores, memoryMiB: vm.memoryMiB, diskGiB: vm.diskGiB } };
    const serialDir = join(baseDir, 'serial');
    mkdirSync(serialDir);
    const maker = new LibvirtDriver({
      uri: uri(HOSTS[0]), host: HOSTS[0], guestMemoryCapMiB: memoryCapMiB, lifecycleEvents: false, serialLogDir: serialDir,
      ...(guest ? { directKernel: guest } : {}),
    });
    try {
      await maker.create(spec);
    } finally {
      await maker.close();
    }
    if (guest) {
      const log = join(serialDir, `${spec.id}.serial`);
      await until(LABEL, 'the baseline guest booted', async () => (existsSync(log) && readFileSync(log, 'latin1').includes('ferry-tick 5 ') ? true : undefined), 250, 120_000);
    }

    const cliEnv = { ...process.env, EC2_URL: url, FERRY_CREDENTIALS: adminCredentialsFile(baseDir), EC2_ACCESS_KEY: '', EC2_SECRET_KEY: '' };
    let ferryAt: string = HOSTS[0];
    let baseAt: string = HOSTS[0];
    let round = 0;
    const ferryJobs: number[] = [];
    const ferryBytes: number[] = [];
    const baseJobs: number[] = [];
    /** Each timed run on the wall clock, kept with the logs (FERRY_BENCH_KEEP=1) to line up with the daemons'. */
    const timeline: { side: 'ferry' | 'virsh'; from: string; to: string; startedAt: number; endedAt: number; migrationId?: string }[] = [];
    const ferryRound = async (): Promise<number> => {
      const to = ferryAt === HOSTS[0] ? HOSTS[1] : HOSTS[0];
      const startedAt = Date.now();
      const t0 = performance.now();
      const r = await run(process.execPath, [join(ROOT, 'bin', 'euca-migrate-instances'), '-i', instanceId, '--include-dest', to, '--wait'], { env: cliEnv })
        .catch((e: { code?: number; stdout?: string; stderr?: string }) => {
          throw new Error(`migration-libvirt bench: euca-migrate-instances exited ${e.code}: ${e.stdout ?? ''}${e.stderr ?? ''}`);
        });
      const ms = performance.now() - t0;
      const migrationId = /^MIGRATION\t(\S+)/m.exec(r.stdout)?.[1];
      timeline.push({ side: 'ferry', from: ferryAt, to, startedAt, endedAt: Date.now(), ...(migrationId ? { migrationId } : {}) });
      ferryAt = to;
      // Outside the clock: the job's own figures, and the CLC showing the guest where it went (the next round starts there).
      const mig = items(((await q({ Action: 'DescribeMigrations', 'MigrationId.1': migrationId ?? '' })).migrationSet as Doc | undefined)?.item)[0];
      const stats = (items((mig?.itemSet as Doc | undefined)?.item)[0]?.stats ?? {}) as Doc;
      ferryJobs.push(Number(stats.elapsedMs));
      ferryBytes.push(Number(stats.bytesTransferred));
      await until(LABEL, 'DescribeInstances showing the guest moved', async () => {
        const i = await describeInstance(q, instanceId);
        return i?.nodeHost === to && (i.instanceState as Doc | undefined)?.name === 'running' ? true : undefined;
      }, 100);
      return ms;
    };
    const baselineRound = async (): Promise<number> => {
      const to = baseAt === HOSTS[0] ? HOSTS[1] : HOSTS[0];
      const port = VIRSH_STREAM_PORTS[round++ % VIRSH_STREAM_PORTS.length]!;
      const startedAt = Date.now();
      const t0 = performance.now();
      await run('virsh', ['-q', '-c', uri(baseAt), 'migrate', '--live', '--p2p', '--tls', '--persistent', '--undefinesource',
        '--migrateuri', `tcp://${to}:${port}`, '--listen-address', to, spec.id, uri(to)], { timeout: 300_000 });
      const ms = performance.now() - t0;
      timeline.push({ side: 'virsh', from: baseAt, to, startedAt, endedAt: Date.now() });
      baseAt = to;
      const info = jobInfo(await virsh(uri(to), 'domjobinfo', '--completed', spec.id));
      if (info.elapsedMs !== undefined) baseJobs.push(info.elapsedMs);
      return ms;
    };
    await ferryRound();
    await baselineRound();
    ferryJobs.length = 0;
    ferryBytes.length = 0;
    baseJobs.length = 0;
    const f: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < pairs; i++) {
      f.push(await ferryRound());
      b.push(await baselineRound());
    }
    writeFileSync(join(baseDir, 'logs', 'bench-timeline.json'), `${JSON.stringify(timeline, null, 1)}\n`);
    await virsh(uri(baseAt), 'destroy', spec.id);
    await virsh(uri(baseAt), 'undefine', spec.id);
    return {
      ferryMs: median(f), baselineMs: median(b), pairs, guest: guestKind, ferryJobMs: median(ferryJobs),
      baselineJobMs: baseJobs.length > 0 ? median(baseJobs) : Number.NaN, ferryMiB: median(ferryBytes) / 2 ** 20, samples: { ferry: f, baseline: b },
    };
  } finally {
    for (const d of running.reverse()) await stopPid(d.pid);
    await stopLab(lab).catch(() => undefined);
    if (process.env.FERRY_BENCH_KEEP === '1') console.log(`migration-libvirt: kept ${baseDir}`);
    else rmSync(baseDir, { recursive: true, force: true });
  }
}

const WHAT = 'one live migration on the libvirt lab: euca-migrate-instances --wait (CLC → CC → NCs, per-migration tunnels) / virsh migrate --live --p2p --tls of the same guest between the same hosts';

/** The case for bench/run.ts: measured, or skipped with the reason when the lab cannot start here. */
export async function migrationLibvirtCase(quick: boolean): Promise<CaseResult> {
  const guest = process.env.FERRY_BENCH_LIBVIRT_GUEST === 'firmware' ? 'firmware' : 'linux';
  let r: MigrationLibvirtResult;
  try {
    r = await migrationLibvirt(quick ? 5 : 11, guest);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg.includes('libvirt lab cannot run')) return skipped('migration-libvirt', WHAT, 1.1, 'lower', msg.split('\n')[0]!);
    throw e;
  }
  return {
    ...measured({
      name: 'migration-libvirt',
      what: `${WHAT}; ${r.guest === 'linux' ? '128 MiB booted Linux' : '64 MiB firmware-only'} guest, ${r.pairs} alternating pairs${quick ? ' (quick: 11 in the full run)' : ''}, medians; libvirt job ${r.ferryJobMs.toFixed(0)} / ${r.baselineJobMs.toFixed(0)} ms, ${r.ferryMiB.toFixed(1)} MiB moved`,
      ferry: r.ferryMs, baseline: r.baselineMs, unit: 'ms', target: 1.1, better: 'lower',
    }),
    samples: r.samples,
  } as CaseResult;
}
