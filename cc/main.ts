/** Entry point of one cluster controller: `node dist/cc/main.js --partition cluster01 --nodes …`. */
import { systemClock } from '../shared/clock.js';
import { runMain } from '../shared/config/compileConfig.js';
import { createLogger } from '../shared/log.js';
import { HelpShown, parseCcConfig, type CcConfig } from './config.js';
import { startCc } from './daemon.js';

function readConfig(): CcConfig {
  try {
    return parseCcConfig(process.argv.slice(2), process.env, (s) => process.stdout.write(s));
  } catch (e) {
    if (e instanceof HelpShown) process.exit(0);
    throw e;
  }
}

await runMain(async () => {
  const config = readConfig();
  const logger = createLogger('cc');
  const cc = await startCc(config, { logger, clock: systemClock });
  process.stdout.write(`cc listening on ${cc.url}\n`);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'cc stopping');
    cc.stop().then(() => process.exit(0), (e: unknown) => {
      logger.error({ err: e }, 'unclean stop');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
});
