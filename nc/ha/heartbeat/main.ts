/**
 * Entry point of ferry-heartbeat: one per libvirt host, run beside (not by) the NC, e.g. as its own
 * systemd unit (docs/OPERATIONS.md). Prints `heartbeat running for HOST` once the first round is on
 * disk; SIGTERM/SIGINT stop it after the round in flight (the heartbeat then goes stale, as it should).
 */
import { systemClock } from '../../../shared/clock.js';
import { runMain } from '../../../shared/config/compileConfig.js';
import { HelpShown } from '../../../shared/config/flagTable.js';
import { createLogger } from '../../../shared/log.js';
import { parseHeartbeatConfig } from './config.js';
import { HeartbeatAgent } from './heartbeatAgent.js';
import { libvirtStatusProbe, sharedStorageFiles } from './hostFiles.js';

async function main(): Promise<void> {
  let config;
  try {
    config = parseHeartbeatConfig(process.argv.slice(2), process.env, (s) => process.stdout.write(s));
  } catch (e) {
    if (e instanceof HelpShown) process.exit(0);
    throw e;
  }
  const log = createLogger('heartbeat');
  const agent = new HeartbeatAgent(
    { host: config.host, storageDir: config.storageDir, intervalMs: config.intervalMs, pid: process.pid },
    systemClock, libvirtStatusProbe(config.libvirtRunDir), sharedStorageFiles(config.storageDir, config.host), log,
  );
  await agent.beat();
  agent.start();
  // systemClock's timers are unref'd: this handle keeps the process alive until a signal.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const stop = (signal: string): void => {
    log.info({ signal }, 'stopping');
    clearInterval(keepAlive);
    void agent.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  process.stdout.write(`heartbeat running for ${config.host} in ${config.storageDir}\n`);
}

void runMain(main);
