/**
 * `npm run bench:tunnel`: what a per-migration tunnel costs on real libvirt/QEMU (scripts/libvirt-lab.sh,
 * two libvirtd "hosts" on 127.0.57.3/.4, lab dir /tmp/ferry-lab-tunnel/bench), against libvirt's own TLS
 * migration (VIR_MIGRATE_TLS, the per-host TLS directory) and plain peer-to-peer TCP, with the same
 * guest between the same hosts. Modes alternate within each round (host 1 → 2, then back), so drift
 * in machine load hits all alike; medians of wall time (migrateOut: handshakes included), libvirt's
 * job time and downtime per mode, and the ratios tunnel / libvirt TLS and tunnel / plain.
 *   FERRY_BENCH_TUNNEL_ROUNDS (default 5; two migrations per mode per round)
 *   FERRY_BENCH_TUNNEL_GUEST  linux (default: 128 MiB booted kernel, ~86 MiB moved) or firmware (64 MiB, ~0.6 MB)
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DomainSpec, MigrationStats } from '../nc/hypervisor/driver.js';
import { LibvirtDriver, type LibvirtDriverOptions } from '../nc/hypervisor/libvirt/libvirtDriver.js';
import { buildGuest, labLayout, startLab, stopLab } from '../scripts/libvirtLab.js';
import { BenchCa } from './libvirtBenchCa.js';

const LAB = '/tmp/ferry-lab-tunnel/bench';
const ADDRS = ['127.0.57.3', '127.0.57.4'] as const;
const LIBVIRT_PORT = 17509;
const TUNNEL = { port: 17514, local: 'host' as const, dataPorts: { min: 17600, max: 17699 } };
const ROUNDS = Number(process.env.FERRY_BENCH_TUNNEL_ROUNDS ?? 5);
const GUEST = process.env.FERRY_BENCH_TUNNEL_GUEST === 'firmware' ? 'firmware' : 'linux';
const uri = (n: 0 | 1): string => `qemu+tcp://${ADDRS[n]}:${LIBVIRT_PORT}/system`;

const lab = labLayout(LAB, { addrs: ADDRS, port: LIBVIRT_PORT });

type Mode = 'plain' | 'libvirt-tls' | 'tunnel';
interface Sample { readonly wallMs: number; readonly stats: MigrationStats }

/** Until the guest's serial port shows its init counting (a booted kernel), within 90 s. */
async function booted(log: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!(existsSync(log) && readFileSync(log, 'latin1').includes('ferry-tick 5 '))) {
    if (Date.now() > deadline) throw new Error(`guest did not boot: no ticks in ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function main(): Promise<void> {
  await startLab(lab);
  const boot = GUEST === 'linux' ? { directKernel: { kernel: join(LAB, 'guest', 'vmlinuz'), initrd: join(LAB, 'guest', 'initrd.img') }, guestMemoryCapMiB: 128 } : { guestMemoryCapMiB: 64 };
  if (GUEST === 'linux') await buildGuest(lab);
  const common = (n: 0 | 1): LibvirtDriverOptions => ({ uri: uri(n), host: ADDRS[n], guestVcpuCap: 1, lifecycleEvents: false, serialLogDir: LAB, ...boot });
  const byMode: Record<'tls' | 'tunnel', [LibvirtDriver, LibvirtDriver]> = {
    tls: [new LibvirtDriver({ ...common(0), migrationTlsDir: join(LAB, 'host1', 'tls') }), new LibvirtDriver({ ...common(1), migrationTlsDir: join(LAB, 'host2', 'tls') })],
    tunnel: [new LibvirtDriver({ ...common(0), tunnel: TUNNEL }), new LibvirtDriver({ ...common(1), tunnel: TUNNEL })],
  };
  const ca = new BenchCa();
  const spec: DomainSpec = { id: 'i-bench001', resources: { cores: 1, memoryMiB: GUEST === 'linux' ? 128 : 64, diskGiB: 1 }, imageId: 'emi-bench' };
  const samples: Record<Mode, Sample[]> = { plain: [], 'libvirt-tls': [], tunnel: [] };
  let at: 0 | 1 = 0;
  let n = 0;
  const migrate = async (mode: Mode): Promise<void> => {
    const [src, dst] = mode === 'tunnel' ? [byMode.tunnel[at], byMode.tunnel[1 - at]] : [byMode.tls[at], byMode.tls[1 - at]];
    const migrationId = `mig-b${++n}`;
    const key = `${migrationId}-${spec.id}`;
    const creds = mode === 'tunnel' ? ca.migration(migrationId, spec.id, ADDRS[at], ADDRS[1 - at]!)
      : mode === 'libvirt-tls' ? { source: ca.host(ADDRS[at]), destination: ca.host(ADDRS[1 - at]!) } : undefined;
    const t0 = performance.now();
    await dst!.prepareIncoming(spec, key, creds?.destination);
    const stats = await src!.migrateOut(spec.id, { migrationId: key, destinationUri: uri(at === 0 ? 1 : 0), ...(creds ? { credential: creds.source } : {}) });
    samples[mode].push({ wallMs: performance.now() - t0, stats });
    at = at === 0 ? 1 : 0;
  };
  try {
    rmSync(join(LAB, `${spec.id}.serial`), { force: true });
    await byMode.tls[0].create(spec);
    if (GUEST === 'linux') await booted(join(LAB, `${spec.id}.serial`)); // its booted memory is what moves
    for (const mode of ['plain', 'libvirt-tls', 'tunnel'] as const) await migrate(mode); // warm-up, not counted
    for (const k of Object.keys(samples) as Mode[]) samples[k].length = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of ['plain', 'libvirt-tls', 'tunnel'] as const) {
        await migrate(mode);
        await migrate(mode);
      }
    }
  } finally {
    for (const d of [...byMode.tls, ...byMode.tunnel]) await d.destroy(spec.id).catch(() => undefined);
    for (const d of [...byMode.tls, ...byMode.tunnel]) await d.close();
    await stopLab(lab);
  }
  const row = (m: Mode) => ({
    wall: median(samples[m].map((s) => s.wallMs)), job: median(samples[m].map((s) => s.stats.elapsedMs)),
    downtime: median(samples[m].map((s) => s.stats.downtimeMs)), mib: median(samples[m].map((s) => s.stats.bytesTransferred)) / 2 ** 20,
  });
  const rows = { plain: row('plain'), 'libvirt-tls': row('libvirt-tls'), tunnel: row('tunnel') };
  console.log(`guest: ${GUEST}; ${ROUNDS * 2} migrations per mode (medians)`);
  console.log('mode          wall ms   job ms   downtime ms   MiB moved');
  for (const [m, r] of Object.entries(rows)) {
    console.log(`${m.padEnd(12)} ${r.wall.toFixed(0).padStart(7)} ${r.job.toFixed(0).padStart(8)} ${r.downtime.toFixed(0).padStart(13)} ${r.mib.toFixed(1).padStart(11)}`);
  }
  const ratio = (a: number, b: number): string => (a / b).toFixed(2);
  console.log(`tunnel / libvirt TLS: wall ${ratio(rows.tunnel.wall, rows['libvirt-tls'].wall)}, job ${ratio(rows.tunnel.job, rows['libvirt-tls'].job)}, downtime ${ratio(rows.tunnel.downtime, rows['libvirt-tls'].downtime)}`);
  console.log(`tunnel / plain TCP:   wall ${ratio(rows.tunnel.wall, rows.plain.wall)}, job ${ratio(rows.tunnel.job, rows.plain.job)}, downtime ${ratio(rows.tunnel.downtime, rows.plain.downtime)}`);
  console.log(`libvirt TLS / plain:  wall ${ratio(rows['libvirt-tls'].wall, rows.plain.wall)}, job ${ratio(rows['libvirt-tls'].job, rows.plain.job)}`);
}

await main();
process.exit(0);
