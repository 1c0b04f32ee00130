import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFerryError } from '../../../../shared/errors/registry.js';
import { MigrationTlsDir, tlsFilesFor } from '../../../../nc/hypervisor/libvirt/tlsFiles.js';

const cred = (ca: string, who: string): { caPem: string; certPem: string; keyPem: string } => ({ caPem: ca, certPem: `cert ${who}`, keyPem: `key ${who}` });
let dir: string;

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'ferry-lvtls-')), 'tls');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

describe('tlsFilesFor', () => {
  it('names QEMU\'s client files on the source and server files on the destination', () => {
    expect(tlsFilesFor('source', cred('CA', 's')).map((f) => [f.name, f.mode])).toEqual([['ca-cert.pem', 0o644], ['client-cert.pem', 0o644], ['client-key.pem', 0o600]]);
    expect(tlsFilesFor('destination', cred('CA', 'd')).map((f) => f.name)).toEqual(['ca-cert.pem', 'server-cert.pem', 'server-key.pem']);
  });
});

describe('MigrationTlsDir', () => {
  it('writes the source files with a private key for the migration only', async () => {
    const t = new MigrationTlsDir(dir, 'uri');
    const release = await t.holdSource('m-1', cred('CA', 's'));
    expect(readFileSync(join(dir, 'client-key.pem'), 'utf8')).toBe('key s');
    expect(statSync(join(dir, 'client-key.pem')).mode & 0o777).toBe(0o600);
    await release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('lets outgoing migrations take turns', async () => {
    const t = new MigrationTlsDir(dir, 'uri');
    const first = await t.holdSource('m-1', cred('CA', 'one'));
    let secondIn = false;
    const second = t.holdSource('m-2', cred('CA', 'two')).then((r) => {
      secondIn = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(secondIn).toBe(false);
    await first();
    const release = await second;
    expect(readFileSync(join(dir, 'client-cert.pem'), 'utf8')).toBe('cert two');
    await release();
  });

  it('holds the destination files for one incoming migration; a repeat replaces the credential', async () => {
    const t = new MigrationTlsDir(dir, 'uri');
    await t.holdDestination('m-1', cred('CA', 'a'));
    await t.holdDestination('m-1', cred('CA', 'b'));
    expect(readFileSync(join(dir, 'server-cert.pem'), 'utf8')).toBe('cert b');
    const refused = await t.holdDestination('m-2', cred('CA', 'c')).catch((e: unknown) => e);
    expect(isFerryError(refused) && refused.code).toBe('HypervisorUnavailable');
    await t.releaseDestination('m-2'); // not the holder: nothing happens
    expect(t.holdsDestination('m-1')).toBe(true);
    await t.releaseDestination('m-1');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps the shared CA file while the other side uses it, and refuses a second CA', async () => {
    const t = new MigrationTlsDir(dir, 'uri');
    await t.holdDestination('m-in', cred('CA', 'd'));
    const other = await t.holdSource('m-out', cred('OTHER', 's')).catch((e: unknown) => e);
    expect(isFerryError(other) && other.code).toBe('HypervisorUnavailable');
    const release = await t.holdSource('m-out', cred('CA', 's'));
    await release();
    expect(readdirSync(dir).sort()).toEqual(['ca-cert.pem', 'server-cert.pem', 'server-key.pem']);
  });
});
