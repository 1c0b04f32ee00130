/**
 * The read-only scrape credential: a random bearer token in a file of its own (mode 0600), made at
 * the first start when missing and read as it is otherwise, so an operator can give it to
 * Prometheus (`authorization: { credentials_file: ... }`) without handing over the admin keys.
 * Rotate by deleting the file and restarting the daemon.
 */
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { writeFileDurable } from '../store/durableFile.js';
import { MetricsErrors } from './errors.js';

const TOKEN = /^[A-Za-z0-9._~+/=-]{16,512}$/;

export async function loadOrCreateScrapeToken(path: string): Promise<{ token: string; created: boolean }> {
  const found = await stat(path).then(() => true, (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return false;
    throw MetricsErrors.make('ScrapeTokenUnreadable', { path, detail: e.message });
  });
  if (!found) {
    const token = randomBytes(32).toString('hex');
    await writeFileDurable(path, `${token}\n`, 0o600);
    return { token, created: true };
  }
  const token = (await readFile(path, 'utf8').catch((e: Error) => {
    throw MetricsErrors.make('ScrapeTokenUnreadable', { path, detail: e.message });
  })).trim();
  if (!TOKEN.test(token)) throw MetricsErrors.make('ScrapeTokenUnreadable', { path, detail: 'not one token of 16 to 512 URL-safe characters' });
  return { token, created: false };
}
