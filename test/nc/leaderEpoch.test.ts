/** CC leader epochs at the NC (nc/leaderEpoch.ts): the pure rule, its guard over nc.json, and the wrapped handlers. */
import { describe, expect, it } from 'vitest';
import { decideEpoch, EpochGuard, guardChanges } from '../../nc/leaderEpoch.js';
import { openMemoryNcStore } from '../../nc/ncStore.js';
import { silentLogger } from '../../shared/log.js';
import { NC_CHANGE_OPS } from '../../shared/protocol/leaderEpoch.js';
import { NC_OPS } from '../../shared/protocol/ncProtocol.js';
import type { WireHandlers } from '../../shared/wire/transport.js';

const HOST = '127.0.96.31';

describe('decideEpoch (pure)', () => {
  it.each([
    [undefined, '0', { kind: 'accept' }],
    [undefined, '7', { kind: 'advance', epoch: '7' }],
    ['7', '7', { kind: 'accept' }],
    ['7', '8', { kind: 'advance', epoch: '8' }],
    ['8', '7', { kind: 'refuse', seen: '8' }],
    ['8', '0', { kind: 'refuse', seen: '8' }],
    // Big integers, not strings or doubles: "10" > "9", and past 2^53.
    ['9', '10', { kind: 'advance', epoch: '10' }],
    ['10', '9', { kind: 'refuse', seen: '10' }],
    ['9007199254740993', '9007199254740992', { kind: 'refuse', seen: '9007199254740993' }],
    ['9007199254740992', '9007199254740993', { kind: 'advance', epoch: '9007199254740993' }],
    ['7', '007', { kind: 'accept' }],
  ] as const)('seen %s, got %s: %j', (seen, got, expected) => {
    expect(decideEpoch(seen, got)).toEqual(expected);
  });
});

async function guarded() {
  const store = await openMemoryNcStore();
  const guard = new EpochGuard({ host: HOST, store, logger: silentLogger() });
  return { store, guard };
}

describe('EpochGuard', () => {
  it('persists a higher epoch before admitting it, and refuses older ones with StaleLeaderEpoch', async () => {
    const { store, guard } = await guarded();
    await guard.admit('0', 'ncModifyNode');
    expect(store.read().leaderEpoch).toBeUndefined();
    await guard.admit('41', 'ncModifyNode');
    expect(store.read().leaderEpoch).toBe('41');
    await expect(guard.admit('40', 'ncMigrateInstances')).rejects.toMatchObject({ code: 'StaleLeaderEpoch', fields: { host: HOST, seen: '41', got: '40' } });
    await expect(guard.admit('0', 'ncRunInstance')).rejects.toMatchObject({ code: 'StaleLeaderEpoch' });
    expect(store.read().leaderEpoch).toBe('41');
  });

  it('of two raises at once, the higher stays and the lower is refused when it lands second', async () => {
    const { store, guard } = await guarded();
    const [hi, lo] = await Promise.allSettled([guard.admit('50', 'ncModifyNode'), guard.admit('45', 'ncModifyNode')]);
    expect(hi.status).toBe('fulfilled');
    // 45 was decided "advance" before 50 was written; inside its own write it meets 50 and is refused.
    expect(lo).toMatchObject({ status: 'rejected', reason: { code: 'StaleLeaderEpoch' } });
    expect(store.read().leaderEpoch).toBe('50');
  });

  it('a store that cannot be written refuses with StateWriteFailed and admits nothing', async () => {
    const { store } = await guarded();
    const failing = { read: () => store.read(), update: () => Promise.reject(new Error('EROFS')) };
    const guard = new EpochGuard({ host: HOST, store: failing, logger: silentLogger() });
    await expect(guard.admit('3', 'ncModifyNode')).rejects.toMatchObject({ code: 'StateWriteFailed' });
  });
});

describe('guardChanges', () => {
  const called: string[] = [];
  const handlers: WireHandlers = Object.fromEntries(Object.keys(NC_OPS).map((op) => [op, () => { called.push(op); return Promise.resolve({}); }]));
  const ctx = { peer: '127.0.96.1' };

  it('checks every change and no read', async () => {
    const { guard } = await guarded();
    const g = guardChanges(handlers, guard);
    expect([...NC_CHANGE_OPS].every((op) => g[op] !== handlers[op])).toBe(true);
    expect(g.ncDescribeResource).toBe(handlers.ncDescribeResource);
    expect(g.ncCheckActivity).toBe(handlers.ncCheckActivity);
  });

  it('a stale epoch is refused before the handler runs; a newer one is persisted and handled', async () => {
    const { store, guard } = await guarded();
    const g = guardChanges(handlers, guard);
    called.length = 0;
    await g.ncModifyNode!({ stateName: 'disabled', leaderEpoch: '12' }, ctx);
    expect(store.read().leaderEpoch).toBe('12');
    await expect(g.ncModifyNode!({ stateName: 'enabled', leaderEpoch: '11' }, ctx)).rejects.toMatchObject({ code: 'StaleLeaderEpoch' });
    await expect(g.ncModifyNode!({ stateName: 'enabled' }, ctx)).rejects.toMatchObject({ code: 'StaleLeaderEpoch' });
    expect(called).toEqual(['ncModifyNode']);
  });

  it.each([
    ['a bad epoch', { stateName: 'disabled', leaderEpoch: '1e3' }, 'InvalidLeaderEpoch'],
    ['a negative epoch', { stateName: 'disabled', leaderEpoch: '-1' }, 'InvalidLeaderEpoch'],
    ['a bad body with a newer epoch', { stateName: 'sideways', leaderEpoch: '99' }, 'InvalidParameter'],
  ])('%s changes nothing, not even the epoch', async (_n, body, code) => {
    const { store, guard } = await guarded();
    const g = guardChanges(handlers, guard);
    called.length = 0;
    await expect(g.ncModifyNode!(body, ctx)).rejects.toMatchObject({ code });
    expect(store.read().leaderEpoch).toBeUndefined();
    expect(called).toEqual([]);
  });
});
