/**
 * The admin identity's keys, in `<state-dir>/admin.credentials` (eucarc style, mode 0600). Created
 * with fresh random keys at the first start when missing; read as it is otherwise, so an operator
 * rotates the keys by deleting the file and restarting the CLC (docs/SECURITY.md). A file that
 * cannot be read is an error, never silently replaced: that would lock the admin's tools out.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  CredentialsFileError, formatCredentialsFile, generateCredentials, missingToolExports, parseCredentialsFile, type Credentials,
} from '../../shared/auth/credentialsFile.js';
import { writeFileDurable } from '../../shared/store/durableFile.js';
import { ADMIN_ACCOUNT_ID, type Identity } from '../core/identities.js';

export const ADMIN_CREDENTIALS_FILE = 'admin.credentials';

export interface AdminCredentialsOptions {
  readonly stateDir: string;
  /** EC2_URL written into a new file, so `source admin.credentials` points euca2ools at this CLC. */
  readonly url: string;
  readonly logger: Logger;
  /** When the file is created (for its comment). */
  readonly now: number;
  readonly generate?: () => Credentials;
}

function adminIdentity(c: Credentials): Identity {
  return { name: 'admin', accessKey: c.accessKey, secretKey: c.secretKey, accountId: ADMIN_ACCOUNT_ID, isAdmin: true };
}

/** The admin identity, creating its credentials file first if there is none. */
export async function loadOrCreateAdminCredentials(opts: AdminCredentialsOptions): Promise<{ identity: Identity; path: string; created: boolean }> {
  const path = join(opts.stateDir, ADMIN_CREDENTIALS_FILE);
  const existing = await stat(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw new CredentialsFileError(path, `cannot be read (${e.message})`);
  });
  if (existing) {
    const text = await readFile(path, 'utf8').catch((e: Error) => {
      throw new CredentialsFileError(path, `cannot be read (${e.message})`);
    });
    const file = parseCredentialsFile(text, path);
    // Group- or world-readable keys are someone else's keys too; say so, but keep serving.
    if ((existing.mode & 0o077) !== 0) opts.logger.warn({ path, mode: (existing.mode & 0o777).toString(8) }, 'admin credentials file is readable by others; chmod 600 it');
    // A file from before the AWS tools' variables were written: add them, keys and everything else unchanged.
    const missing = missingToolExports(text, { ...file, url: file.url ?? opts.url });
    if (missing.length > 0) {
      const added = `${text.endsWith('\n') || text === '' ? text : `${text}\n`}${missing.map(([k, v]) => `export ${k}=${v}`).join('\n')}\n`;
      await writeFileDurable(path, added, existing.mode & 0o777);
      opts.logger.info({ path, added: missing.map(([k]) => k) }, 'admin credentials file: added the variables the AWS tools and euca2ools read');
    }
    opts.logger.info({ path, accessKeyId: file.accessKey }, 'admin credentials loaded');
    return { identity: adminIdentity(file), path, created: false };
  }
  const creds = (opts.generate ?? generateCredentials)();
  const comment = [
    `Ferry cloud administrator credentials, created ${new Date(opts.now).toISOString()}.`,
    'Anyone holding these keys administers the cloud: keep this file mode 0600.',
    'Rotate: stop the CLC, delete this file, start the CLC (new keys are written here).',
  ].join('\n');
  await writeFileDurable(path, formatCredentialsFile({ ...creds, url: opts.url }, comment), 0o600);
  opts.logger.info({ path, accessKeyId: creds.accessKey }, 'admin credentials created');
  return { identity: adminIdentity(creds), path, created: true };
}
