/** Start-up refusals of the BUILT NC (`npx tsc -p tsconfig.json` first), on 127.0.10.2 only. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'dist/nc/main.js');
const HOST = '127.0.10.2';
let dir: string;

beforeEach(() => {
  if (!existsSync(MAIN)) throw new Error('dist/nc/main.js is missing: run npx tsc -p tsconfig.json first');
  dir = mkdtempSync(join(tmpdir(), 'ferry-nc-start-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function runNc(args: string[]) {
  return spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 15_000, env: { ...process.env, FERRY_NC_HOST: '' } });
}

describe('NC start-up', () => {
  it.each([
    ['corrupt JSON', '{"schemaVersion":1,"kind":"ferry-nc","data":{', 'StoreCorrupt'],
    ['another kind of store', JSON.stringify({ schemaVersion: 1, kind: 'ferry-cc', data: {} }), 'StoreSchemaMismatch'],
    ['a record of the wrong shape', JSON.stringify({ schemaVersion: 1, kind: 'ferry-nc', data: { nodeState: 'sleepy', instances: {} } }), 'StoreInvalid'],
  ])('refuses %s in nc.json with the store code, leaving the file alone', (_n, contents, code) => {
    const stateDir = join(dir, 'nc');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'nc.json'), contents);
    const r = runNc(['--host', HOST, '--state-dir', stateDir, '--sim-socket', join(stateDir, 'no-simhv.sock'), '--insecure-plaintext']);
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBeNull();
    expect(r.stderr).toContain(code);
    expect(r.stdout).not.toContain('nc listening');
    expect(readFileSync(join(stateDir, 'nc.json'), 'utf8')).toBe(contents);
  });

  it('exits 2 naming every bad flag', () => {
    const r = runNc(['--host', '10.1.1.1', '--port', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--host (FERRY_NC_HOST): must be a loopback');
    expect(r.stderr).toContain('--port (FERRY_NC_PORT): must be a whole number');
    expect(r.stderr).toContain('--state-dir (FERRY_NC_STATE_DIR): is required');
  });

  it('exits 2 without --tls-dir or --insecure-plaintext, naming both and ferry-init, before touching its state dir', () => {
    const stateDir = join(dir, 'nc');
    const r = runNc(['--host', HOST, '--state-dir', stateDir, '--sim-socket', join(stateDir, 'no-simhv.sock')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--tls-dir \(FERRY_NC_TLS_DIR\): required unless --insecure-plaintext is given: run ferry-init/);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('stops with TlsFileMissing when --tls-dir lacks nc-HOST.pem: never a fallback to plaintext', () => {
    const r = runNc(['--host', HOST, '--state-dir', join(dir, 'nc'), '--sim-socket', join(dir, 'no-simhv.sock'), '--tls-dir', join(dir, 'no-certs')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('TlsFileMissing');
    expect(r.stdout).not.toContain('nc listening');
  });
});
