/**
 * `simhv`: the simulated hypervisor daemon, one per simulated host (the role libvirtd plays).
 * Flags fall back to SIMHV_* environment variables; bad configuration exits 2 naming the field.
 * Prints `simhv TLS migrations on https://HOST:TLSPORT` (and, with --insecure-plaintext,
 * `simhv plaintext migrations on http://HOST:PORT`), then `simhv listening on unix:SOCKET` on stdout
 * once ready; SIGTERM/SIGINT close cleanly.
 */
import { CommanderError } from 'commander';
import { isFerryError } from '../../../shared/errors/registry.js';
import { createLogger, type Logger } from '../../../shared/log.js';
import { compileSimHvConfig, SimHvConfigError, type RawSimHvConfig } from './config.js';
import { parseSimHvFlags } from './flags.js';
import { startSimHvDaemon } from './daemon.js';

/** Loud on purpose, as the tiers' --insecure-plaintext: this host takes migrations nobody vouched for. */
function warnPlaintext(log: Logger, url: string): void {
  const line = `simhv: WARNING: migrations WITHOUT per-migration credentials are accepted in PLAINTEXT on ${url} (--insecure-plaintext given). `
    + 'Any local process can push a guest into a migration this host prepared. Run the cloud with --tls-dir instead.';
  log.warn({ security: 'plaintext' }, line);
  process.stderr.write(`${'!'.repeat(78)}\n${line}\n${'!'.repeat(78)}\n`);
}

async function main(): Promise<void> {
  let raw: RawSimHvConfig;
  try {
    raw = parseSimHvFlags(process.argv.slice(2), process.env, (t) => process.stderr.write(t));
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.code === 'commander.helpDisplayed' || e.code === 'commander.help' ? 0 : 2);
    throw e;
  }
  let config;
  try {
    config = compileSimHvConfig(raw);
  } catch (e) {
    if (!(e instanceof SimHvConfigError)) throw e;
    process.stderr.write('simhv: invalid configuration\n');
    for (const i of e.issues) process.stderr.write(`  ${i.flag} (${i.env}): ${i.message}\n`);
    process.exit(2);
  }
  const log = createLogger(`simhv ${config.host}`);
  let daemon;
  try {
    daemon = await startSimHvDaemon(config, log);
  } catch (e) {
    log.fatal({ err: e }, 'simhv could not start');
    // One plain line for the operator: a coded error (an unusable control socket, say) says what to fix.
    process.stderr.write(`simhv: could not start: ${isFerryError(e) ? `${e.code}: ` : ''}${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  }
  if (daemon.plaintextUrl !== undefined) warnPlaintext(log, daemon.plaintextUrl);
  const plaintextLine = daemon.plaintextUrl === undefined ? '' : `simhv plaintext migrations on ${daemon.plaintextUrl}\n`;
  process.stdout.write(`simhv TLS migrations on ${daemon.tlsUrl}\n${plaintextLine}simhv listening on unix:${daemon.socketPath}\n`);
  log.info({ socket: daemon.socketPath, tlsUrl: daemon.tlsUrl, capacity: config.capacity, stateDir: config.stateDir, storageDir: config.storageDir }, 'ready');

  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down');
    daemon.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

void main();
