import { describe, expect, it } from 'vitest';
import { effectHost, effectKey, toNcRequest, type Effect } from '../../../cc/migration/effects.js';
import { backstopMs, CREDENTIAL_GRACE_MS, credentialLifetimeMs, noteFailure, phaseLimitMs, type Mark } from '../../../cc/migration/marks.js';
import { ncMigrateRequestSchema } from '../../../shared/protocol/migrationProtocol.js';
import { D1, D2, id, item, MIG, plan, S, TIMEOUTS } from './builders.js';
import { LARGE } from '../fakeNodes.js';

const spec = { migrationId: MIG, instanceId: id(1), source: S, reservationId: 'r-00000001', imageId: 'emi-1', ownerId: 'alice', launchTime: 1, vmType: LARGE };
const EFFECTS: [Effect, string, Record<string, unknown>][] = [
  [{ kind: 'prepareDestination', migrationId: MIG, instanceId: id(1), source: S, destination: D1, incoming: spec, allowDisabled: true, credentialLifetimeMs: 1000 }, D1,
    { action: 'prepare', role: 'destination', migrationId: MIG, incoming: spec, allowDisabled: true }],
  [{ kind: 'commit', migrationId: MIG, instanceId: id(1), source: S, destination: D1, credentialLifetimeMs: 1000 }, S,
    { action: 'commit', migrationId: MIG, instanceId: id(1), destination: D1, destinationUri: `tcp://${D1}:49152/${D1}` }],
  [{ kind: 'rollback', side: 'source', host: S, migrationId: MIG, instanceId: id(1), reason: 'x'.repeat(600), cancel: false }, S,
    { action: 'rollback', role: 'source', migrationId: MIG, instanceId: id(1), reason: 'x'.repeat(500), cancel: false }],
  [{ kind: 'rollback', side: 'source', host: S, migrationId: MIG, reason: 'migration cancelled', cancel: true }, S,
    { action: 'rollback', role: 'source', migrationId: MIG, reason: 'migration cancelled', cancel: true }],
  [{ kind: 'rollback', side: 'destination', host: D2, migrationId: MIG, instanceId: id(1), reason: 'stale', cancel: false }, D2,
    { action: 'rollback', role: 'destination', migrationId: MIG, instanceId: id(1), reason: 'stale', cancel: false }],
  [{ kind: 'replan', migrationId: MIG, instanceId: id(1), source: S, destination: D2, reason: 'D1 disabled' }, S,
    { action: 'replan', migrationId: MIG, instanceId: id(1), destination: D2 }],
  [{ kind: 'failItem', migrationId: MIG, instanceId: id(1), source: S, error: 'nowhere to go' }, S,
    { action: 'replan', migrationId: MIG, instanceId: id(1), destination: '', error: 'nowhere to go' }],
];

describe('effects', () => {
  it.each(EFFECTS)('%o goes to the right NC as a contract-valid request', (e, host, req) => {
    expect(effectHost(e)).toBe(host);
    const out = toNcRequest(e, 'tcp://{host}:49152/{host}');
    expect(out).toEqual(req);
    expect(ncMigrateRequestSchema.safeParse(out).success).toBe(true);
  });

  it('every distinct call has its own key; the same call always the same key', () => {
    const keys = EFFECTS.map(([e]) => effectKey(e));
    expect(new Set(keys).size).toBe(keys.length);
    expect(EFFECTS.map(([e]) => effectKey(structuredClone(e)))).toEqual(keys);
  });
});

describe('marks', () => {
  const mark: Mark = { phase: 'preparing', destination: D1, since: 10, asked: true, refused: [] };
  const prepare = EFFECTS[0]?.[0] as Effect;
  const commit = EFFECTS[1]?.[0] as Effect;
  const k = `${MIG}/${id(1)}`;

  it.each<[string, Effect, { code: string; maybeDelivered?: boolean }, Partial<Mark> | 'unchanged']>([
    ['a full destination is a refusal: queued again, avoided', prepare, { code: 'NodeFull' }, { phase: 'queued', asked: false, since: 99, refused: [{ host: D1, reason: 'm' }] }],
    ['a disabled destination likewise', prepare, { code: 'NodeDisabled' }, { phase: 'queued', refused: [{ host: D1, reason: 'm' }] }],
    ['connection refused proves it never arrived', prepare, { code: 'NodeUnreachable', maybeDelivered: false }, { phase: 'queued' }],
    ['a timeout may have prepared it: keep waiting', prepare, { code: 'NodeUnreachable', maybeDelivered: true }, 'unchanged'],
    ['a garbled answer likewise', prepare, { code: 'NodeProtocolError' }, 'unchanged'],
    ['a source refusing commit: give up on the item', commit, { code: 'MigrationNotPrepared' }, { giveUp: 'source refused commit: m' }],
    ['a commit that timed out is simply retried', commit, { code: 'NodeUnreachable', maybeDelivered: true }, 'unchanged'],
  ])('%s', (_name, effect, failure, expected) => {
    const marks = new Map([[k, mark]]);
    const next = noteFailure(marks, k, effect, { message: 'm', ...failure }, 99);
    if (expected === 'unchanged') expect(next).toBe(marks);
    else expect(next.get(k)).toMatchObject(expected);
  });

  it('phase limits: prepare and ready from the plan; migrating is a generous backstop over the NC\'s own allowance', () => {
    const p = plan([]);
    const big = item(id(1), D1, { vmType: { name: 'm2.4xlarge', cores: 8, memoryMiB: 4096, diskGiB: 60 } });
    expect(phaseLimitMs('preparing', p, big)).toBe(TIMEOUTS.prepareMs);
    expect(phaseLimitMs('ready', p, big)).toBe(TIMEOUTS.readyMs);
    const allowance = TIMEOUTS.migratingBaseMs + TIMEOUTS.migratingPerGiBMs * 4;
    expect(backstopMs(p, big)).toBe(2 * allowance + TIMEOUTS.stallMs);
    expect(phaseLimitMs('cleaning', p, big)).toBeUndefined();
    expect(phaseLimitMs('queued', p, big)).toBeUndefined();
  });

  it('credentials live through prepare, ready and the NC\'s migrating allowance, plus a grace, and grow with memory', () => {
    const p = plan([]);
    const big = item(id(1), D1, { vmType: { name: 'm2.4xlarge', cores: 8, memoryMiB: 4096, diskGiB: 60 } });
    const small = item(id(2), D1, { vmType: { name: 'm1.small', cores: 1, memoryMiB: 256, diskGiB: 5 } });
    const allowance = TIMEOUTS.migratingBaseMs + TIMEOUTS.migratingPerGiBMs * 4;
    expect(credentialLifetimeMs(p, big)).toBe(TIMEOUTS.prepareMs + TIMEOUTS.readyMs + allowance + CREDENTIAL_GRACE_MS);
    expect(credentialLifetimeMs(p, small)).toBeLessThan(credentialLifetimeMs(p, big));
  });
});
