/**
 * `simhv`: the simulated hypervisor daemon, one per simulated host (the role libvirtd plays).
 * Flags fall back to SIMHV_* environment variables; bad configuration exits 2 naming the field.
 * Prints `simhv TLS migrations on https://HOST:TLSPORT`, then `simhv listening on http://HOST:PORT`
 * on stdout once ready; SIGTERM/SIGINT close cleanly.
 */
import { Command, CommanderError, Option } from 'commander';
import { createLogger } from '../../../shared/log.js';
import { CONFIG_FIELDS, compileSimHvConfig, SimHvConfigError, type ConfigKey, type RawSimHvConfig } from './config.js';
import { startSimHvDaemon } from './daemon.js';

function parseFlags(argv: string[]): RawSimHvConfig {
  const program = new Command('simhv')
    .description('Simulated hypervisor daemon for Ferry (one per simulated host)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  for (const [key, f] of Object.entries(CONFIG_FIELDS)) {
    const dflt = 'default' in f ? ` (default ${f.default})` : '';
    // attributeName keeps our field names (commander would turn --memory-mib into memoryMib).
    const opt = new Option(`${f.flag} <value>`, `${f.help}${dflt}`).env(f.env);
    opt.attributeName = () => key;
    program.addOption(opt);
  }
  program.parse(argv);
  const opts = program.opts<Record<string, string | undefined>>();
  const raw: RawSimHvConfig = {};
  for (const key of Object.keys(CONFIG_FIELDS) as ConfigKey[]) raw[key] = opts[key];
  return raw;
}

async function main(): Promise<void> {
  let raw: RawSimHvConfig;
  try {
    raw = parseFlags(process.argv);
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
    process.exit(1);
  }
  process.stdout.write(`simhv TLS migrations on ${daemon.tlsUrl}\nsimhv listening on ${daemon.url}\n`);
  log.info({ url: daemon.url, capacity: config.capacity, stateDir: config.stateDir, storageDir: config.storageDir }, 'ready');

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
