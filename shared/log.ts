/** Structured logs (pino) to stderr. Secrets are redacted by path so they never reach a log line. */
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACT = [
  '*.secretKey', '*.password', '*.privateKey', '*.key', 'secretKey', 'password', 'privateKey',
  // Per-migration credentials (their private keys above all) never reach a log, however nested.
  'credential', '*.credential', '*.*.credential', 'keyPem', '*.keyPem', '*.*.keyPem',
];

export function createLogger(name: string, level = process.env.FERRY_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } }, pino.destination(2));
}

/** A logger that drops everything, for unit tests and the simulator. */
export function silentLogger(): Logger {
  // No destination stream: pino's default opens one on stdout per logger and flushes (fsync) each
  // at exit, which cost seconds in a simulator of thousands of NCs.
  return pino({ level: 'silent' }, { write: () => undefined });
}
