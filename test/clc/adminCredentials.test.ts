/** The admin credentials file: created 0600 at the first start, read as it is later, never replaced when broken, secret never logged. */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateAdminCredentials } from '../../clc/state/adminCredentials.js';
import { CredentialsFileError } from '../../shared/auth/credentialsFile.js';
import { capturingLogger } from './harness.js';

const URL = 'http://127.0.0.1:8773/services/Eucalyptus';
let dir: string;

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'ferry-admin-creds-')); });
afterEach(() => { rmSync(dir, { recursive: true, force: true }); });

describe('admin credentials', () => {
  it('are created 0600 at the first start, then read back unchanged; the secret never reaches the log', async () => {
    const { logger, lines } = capturingLogger();
    const first = await loadOrCreateAdminCredentials({ stateDir: dir, url: URL, logger, now: 0 });
    expect(first.created).toBe(true);
    expect(first.identity).toMatchObject({ name: 'admin', isAdmin: true, accountId: '000000000000' });
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    const text = readFileSync(first.path, 'utf8');
    expect(text).toContain(`export EC2_URL=${URL}\n`);
    expect(text).toContain(`export EC2_SECRET_KEY=${first.identity.secretKey}\n`);
    // What the AWS SDKs and CLI, euca2ools and the Eucalyptus 4 admin tools read.
    expect(text).toContain(`export AWS_ACCESS_KEY_ID=${first.identity.accessKey}\n`);
    expect(text).toContain(`export AWS_SECRET_ACCESS_KEY=${first.identity.secretKey}\n`);
    expect(text).toContain('export AWS_DEFAULT_REGION=eucalyptus\n');
    expect(text).toContain('export EUCA_BOOTSTRAP_URL=http://127.0.0.1:8773/services/Empyrean\n');

    const second = await loadOrCreateAdminCredentials({ stateDir: dir, url: 'http://elsewhere/', logger, now: 1 });
    expect([second.created, second.identity]).toEqual([false, first.identity]);
    expect(readFileSync(first.path, 'utf8')).toBe(text);
    expect(JSON.stringify(lines)).not.toContain(first.identity.secretKey);
    expect(JSON.stringify(lines)).toContain(first.identity.accessKey);
  });

  it('gain the AWS tools\' variables when written before them, keys and mode unchanged', async () => {
    const path = join(dir, 'admin.credentials');
    const old = `# old\nexport EC2_URL=http://127.0.9.9:8773/services/Eucalyptus\nexport EC2_ACCESS_KEY=AKIOLD00000000000001\nexport EC2_SECRET_KEY=${'s'.repeat(40)}\n`;
    writeFileSync(path, old, { mode: 0o600 });
    const { logger, lines } = capturingLogger();
    const loaded = await loadOrCreateAdminCredentials({ stateDir: dir, url: URL, logger, now: 0 });
    expect(loaded.identity).toMatchObject({ accessKey: 'AKIOLD00000000000001', secretKey: 's'.repeat(40) });
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(old)).toBe(true);
    expect(text.slice(old.length)).toBe([
      'export EUCA_BOOTSTRAP_URL=http://127.0.9.9:8773/services/Empyrean',
      'export AWS_DEFAULT_REGION=eucalyptus',
      'export AWS_ACCESS_KEY_ID=AKIOLD00000000000001',
      `export AWS_SECRET_ACCESS_KEY=${'s'.repeat(40)}`, '',
    ].join('\n'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(lines)).not.toContain('s'.repeat(40));
    // Once complete, it is left alone.
    await loadOrCreateAdminCredentials({ stateDir: dir, url: URL, logger, now: 1 });
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('refuse to start over a broken file instead of replacing it', async () => {
    const path = join(dir, 'admin.credentials');
    writeFileSync(path, 'EC2_ACCESS_KEY=AKIX\n', { mode: 0o600 });
    await expect(loadOrCreateAdminCredentials({ stateDir: dir, url: URL, logger: capturingLogger().logger, now: 0 })).rejects.toBeInstanceOf(CredentialsFileError);
    expect(readFileSync(path, 'utf8')).toBe('EC2_ACCESS_KEY=AKIX\n');
  });

  it('warn when others can read the file', async () => {
    const path = join(dir, 'admin.credentials');
    writeFileSync(path, 'EC2_ACCESS_KEY=AKIX\nEC2_SECRET_KEY=sk\n');
    chmodSync(path, 0o644);
    const { logger, lines } = capturingLogger();
    await loadOrCreateAdminCredentials({ stateDir: dir, url: URL, logger, now: 0 });
    expect(lines.some((l) => l.level === 40 && String(l.msg).includes('readable by others'))).toBe(true);
  });
});
