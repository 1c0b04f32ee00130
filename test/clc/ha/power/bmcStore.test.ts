/** Per-host BMC settings (clc/ha/power/bmcStore.ts): a separate mode-600 file, validated, never shown with its password. */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BMC_STORE_FILE, fenceConfigFor, openBmcStore, publicBmcView, setBmc, type BmcEntry } from '../../../../clc/ha/power/bmcStore.js';
import { CLC_STORE_FILE, openClcStore } from '../../../../clc/state/clcStore.js';
import { isFerryError } from '../../../../shared/errors/registry.js';

const entry: BmcEntry = { agent: 'fence_ipmilan', options: { ip: '127.0.30.1', ipport: '16230', username: 'admin' }, password: 'pw-9z', timeoutMs: 10_000 };

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ferry-bmc-store-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('bmc.json', () => {
  it('round-trips through a reopen, in a file only its owner can read, and never in clc.json', async () => {
    await openClcStore(dir);
    const s = await openBmcStore(dir);
    await setBmc(s, '127.0.1.1', entry);
    expect((await openBmcStore(dir)).read().hosts['127.0.1.1']).toEqual(entry);
    expect((await stat(join(dir, BMC_STORE_FILE))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, CLC_STORE_FILE), 'utf8')).not.toContain('pw-9z');
  });

  it('refuses settings the agent protocol does not allow, and stores nothing', async () => {
    const s = await openBmcStore(dir);
    await expect(setBmc(s, '127.0.1.1', { ...entry, options: { ip: '127.0.30.1\naction=reboot' } }))
      .rejects.toSatisfy((e: unknown) => isFerryError(e) && e.code === 'InvalidFenceConfig');
    expect(s.read().hosts).toEqual({});
  });

  it('stops start-up on a hand-edited file that no longer compiles', async () => {
    await writeFile(join(dir, BMC_STORE_FILE), JSON.stringify({
      schemaVersion: 1, kind: 'ferry-clc-bmc', data: { hosts: { h: { ...entry, agent: 'sh -c reboot' } } },
    }));
    await expect(openBmcStore(dir)).rejects.toSatisfy((e: unknown) => isFerryError(e) && e.code === 'StoreInvalid');
  });

  it('the public view says whether a password is set, never what it is', () => {
    const view = publicBmcView(entry);
    expect(view).toEqual({ agent: 'fence_ipmilan', options: entry.options, timeoutMs: 10_000, passwordSet: true });
    expect(JSON.stringify(view)).not.toContain('pw-9z');
  });

  it('names the host as the agent target', () => expect(fenceConfigFor('127.0.1.7', entry).target).toBe('127.0.1.7'));
});
