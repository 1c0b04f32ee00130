/**
 * The scale mode of the simulated hypervisor: one process running many simulated hosts, each a real
 * NC (nc/scale/scaleHost.ts) on its own loopback address, so that a real CC and CLC can supervise
 * thousands of hosts on one machine (bench/supervisionCase.ts).
 *   node dist/nc/scale/main.js --hosts-file hosts.txt --tls-dir certs --cc-url https://127.0.90.1:8774 --storage-dir dir
 * hosts.txt: one address per line, each with its nc-<host>.pem/.key in --tls-dir. Prints
 * `scale listening on N hosts` once every host serves. Commands on stdin, one per line:
 *   fail <host> [<host> ...]     those hosts die at once; answers `failed <count> at <epoch ms>`
 *                                (the time before the first one closed)
 *   revive <host> [<host> ...]   those failed hosts boot again, empty, on the same address and
 *                                certificate; answers `revived <count> at <epoch ms>` once all serve
 * A command naming an unknown host, a failed host to fail or a live one to revive is refused whole
 * (`error ...`). SIGTERM, or the end of stdin, stops every host.
 * Each host holds a listener, the CC's connection and its own connection to the CC: the soft
 * RLIMIT_NOFILE must cover three per host (the launcher raises it: `ulimit -n`); a process that
 * would run out refuses to start and says how many it needs.
 */
import '../threadpool.js'; // first: sizes libuv's pool before anything uses it
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import { z } from 'zod';
import { systemClock } from '../../shared/clock.js';
import { isLoopbackV4 } from '../../shared/config/compileConfig.js';
import { isFerryError } from '../../shared/errors/registry.js';
import { createLogger } from '../../shared/log.js';
import { DEFAULT_CONNECTION_LIMITS, readOpenFileLimit } from '../../shared/net/connectionGuard.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { RefusalLog } from '../../shared/refusalLog.js';
import { fsSharedStorage } from '../ha/activityCheck.js';
import { fsDiskIo } from '../hypervisor/sim/diskIo.js';
import { startScaleHost, type ScaleHost } from './scaleHost.js';

/** Handles per host (listener, the CC's connection, the notifier's) and for the process itself. */
export const FDS_PER_HOST = 3;
const FDS_RESERVE = 256;
/** Hosts started at once: each start reads its key files and binds a port. */
const START_CONCURRENCY = 64;

const configSchema = z.object({
  hostsFile: z.string().min(1),
  tlsDir: z.string().min(1),
  ccUrl: z.string().url(),
  storageDir: z.string().min(1),
  port: z.coerce.number().int().min(1).max(65535),
  writeIntervalMs: z.coerce.number().int().min(10),
  keepAliveMs: z.coerce.number().int().min(1000),
  cores: z.coerce.number().int().min(1),
});
type ScaleConfig = z.infer<typeof configSchema>;

function usageError(text: string): never {
  process.stderr.write(`ferry-scale: ${text}\n`);
  process.exit(2);
}

function readConfig(argv: readonly string[]): ScaleConfig {
  const cmd = new Command('ferry-scale')
    .requiredOption('--hosts-file <file>', 'simulated host addresses, one per line')
    .requiredOption('--tls-dir <dir>', 'ferry-init directory with ca.pem and nc-<host>.pem/.key per host')
    .requiredOption('--cc-url <url>', 'the CC every host reports to')
    .requiredOption('--storage-dir <dir>', 'shared storage root (heartbeats; neighbours\' activity checks)')
    .option('--port <n>', 'NC port on every host address', '8775')
    .option('--write-interval-ms <ms>', 'heartbeat period on shared storage', '30000')
    .option('--keep-alive-ms <ms>', 'idle connections kept this long (longer than the CC\'s poll period)', '60000')
    .option('--cores <n>', 'cores per simulated host', '16')
    .allowExcessArguments(false)
    .exitOverride();
  try {
    cmd.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    throw e;
  }
  const parsed = configSchema.safeParse(cmd.opts());
  if (!parsed.success) usageError(parsed.error.issues.map((i) => `--${String(i.path[0])}: ${i.message}`).join('; '));
  return parsed.data;
}

function readHosts(file: string): string[] {
  const hosts = readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const bad = hosts.find((h) => !isLoopbackV4(h));
  if (bad !== undefined) usageError(`${file}: ${bad} is not a loopback IPv4 address`);
  if (new Set(hosts).size !== hosts.length) usageError(`${file}: a host is listed twice`);
  return hosts;
}

async function main(): Promise<void> {
  const config = readConfig(process.argv.slice(2));
  const hosts = readHosts(config.hostsFile);
  const limit = readOpenFileLimit();
  const needed = hosts.length * FDS_PER_HOST + FDS_RESERVE;
  if (limit !== undefined && limit < needed) usageError(`${hosts.length} hosts need ${needed} open files; the soft limit is ${limit} (raise it with ulimit -n, or run fewer hosts per process)`);
  const logger = createLogger('scale');
  const refusals = new RefusalLog({ logger, clock: systemClock });
  const disk = fsDiskIo();
  const sharedStorage = fsSharedStorage(config.storageDir);
  const capacity = { cores: config.cores, memoryMiB: config.cores * 4096, diskGiB: config.cores * 50 };
  /** Each host as it runs now (a revived host is a new ScaleHost on the same address and certificate). */
  const byHost = new Map<string, ScaleHost>();
  const failed = new Set<string>();
  const start = async (host: string): Promise<void> => {
    byHost.set(host, await startScaleHost({
      identity: loadTlsIdentity(config.tlsDir, 'nc', host), port: config.port, ccUrl: config.ccUrl, capacity, storageDir: config.storageDir,
      disk, sharedStorage, writeIntervalMs: config.writeIntervalMs, keepAliveMs: config.keepAliveMs, limits: DEFAULT_CONNECTION_LIMITS,
      clock: systemClock, logger, refusals,
    }));
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < hosts.length) await start(hosts[next++]!);
  };
  await Promise.all(Array.from({ length: START_CONCURRENCY }, worker));
  logger.info({ hosts: hosts.length }, 'scale hosts serving');
  process.stdout.write(`scale listening on ${hosts.length} hosts\n`);

  let stopping = false;
  const shutdown = (why: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'stopping every host');
    refusals.close();
    void Promise.all([...byHost.values()].map((h) => h.close())).then(() => process.exit(0), (e: unknown) => {
      logger.error({ err: e }, 'unclean stop');
      process.exit(1);
    });
  };
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const [cmd, ...args] = line.trim().split(/\s+/);
    if (cmd !== 'fail' && cmd !== 'revive') {
      process.stdout.write(`error unknown command ${JSON.stringify(cmd ?? '')}\n`);
      return;
    }
    // The whole command is refused, and nothing done, if one of its hosts cannot take it.
    const unknown = args.find((h) => !byHost.has(h));
    if (unknown !== undefined) {
      process.stdout.write(`error unknown host ${unknown}\n`);
      return;
    }
    const wrong = args.find((h) => failed.has(h) === (cmd === 'fail'));
    if (wrong !== undefined) {
      process.stdout.write(`error ${wrong} is ${cmd === 'fail' ? 'already failed' : 'not failed'}\n`);
      return;
    }
    const at = Date.now();
    if (cmd === 'fail') {
      for (const h of args) failed.add(h);
      void Promise.all(args.map((h) => byHost.get(h)!.fail())).then(() => process.stdout.write(`failed ${args.length} at ${at}\n`));
      return;
    }
    // Revived: the host boots again, empty (the scale mode's stores are in memory), and tells the CC it is up.
    void Promise.all(args.map(async (h) => {
      await byHost.get(h)!.close();
      await start(h);
      failed.delete(h);
    })).then(
      () => process.stdout.write(`revived ${args.length} at ${at}\n`),
      (e: unknown) => process.stdout.write(`error revive: ${e instanceof Error ? e.message : String(e)}\n`),
    );
  });
  lines.on('close', () => shutdown('end of stdin'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((e: unknown) => {
  process.stderr.write(`ferry-scale: fatal: ${isFerryError(e) ? `${e.code}: ` : ''}${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
