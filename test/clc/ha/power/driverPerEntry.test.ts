/** clc/ha/power/powerDriver.ts driverPerEntry: one driver per host's BMC entry, made again when the store replaces the entry. */
import { describe, expect, it } from 'vitest';
import { openMemoryBmcStore, setBmc, type BmcEntry } from '../../../../clc/ha/power/bmcStore.js';
import { driverPerEntry, type PowerDriver } from '../../../../clc/ha/power/powerDriver.js';

const entry: BmcEntry = { agent: 'fence_ipmilan', options: { ip: '127.0.30.1', ipport: '16230', username: 'admin' }, password: 'pw', timeoutMs: 10_000 };

/** A driver that only says who it was made for (never called here). */
function counting(): { make: (host: string, e: BmcEntry) => PowerDriver; made: string[] } {
  const made: string[] = [];
  const make = (host: string): PowerDriver => {
    made.push(host);
    const never = (): Promise<never> => Promise.reject(new Error(`${host}: not in this test`));
    return { status: never, on: never, off: never, reboot: never };
  };
  return { make, made };
}

describe('driverPerEntry', () => {
  it('hands out the same driver while the store keeps the entry, and a new one once it replaces it', async () => {
    const store = await openMemoryBmcStore();
    await setBmc(store, '127.0.1.1', entry);
    const { make, made } = counting();
    const driverOf = driverPerEntry(make);
    const first = driverOf('127.0.1.1', store.read().hosts['127.0.1.1']!);
    for (let i = 0; i < 5; i++) expect(driverOf('127.0.1.1', store.read().hosts['127.0.1.1']!)).toBe(first);
    expect(made).toEqual(['127.0.1.1']);
    // A changed setting is a new entry: a new driver, made with it.
    await setBmc(store, '127.0.1.1', { ...entry, options: { ...entry.options, ipport: '16231' } });
    expect(driverOf('127.0.1.1', store.read().hosts['127.0.1.1']!)).not.toBe(first);
    expect(made).toEqual(['127.0.1.1', '127.0.1.1']);
  });

  it('makes each host its own driver, even from one shared entry object', () => {
    const { make, made } = counting();
    const driverOf = driverPerEntry(make);
    const a = driverOf('127.0.1.1', entry);
    const b = driverOf('127.0.1.2', entry);
    expect(b).not.toBe(a);
    expect(made).toEqual(['127.0.1.1', '127.0.1.2']);
  });

  it('makes nothing it could not make: a refused entry is refused again at the next ask', () => {
    let calls = 0;
    const driverOf = driverPerEntry((): PowerDriver => {
      calls++;
      throw new Error('InvalidFenceConfig');
    });
    expect(() => driverOf('127.0.1.1', entry)).toThrow('InvalidFenceConfig');
    expect(() => driverOf('127.0.1.1', entry)).toThrow('InvalidFenceConfig');
    expect(calls).toBe(2);
  });
});
