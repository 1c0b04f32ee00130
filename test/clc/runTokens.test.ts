/** ClientToken rules (clc/core/runTokens.ts) as a table, and the per-key mutex RunInstances holds. */
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../shared/keyedMutex.js';
import {
  CLIENT_TOKEN_PATTERN, forgetExpiredRunTokens, judgeRunToken, RUN_TOKEN_RETENTION_MS, runTokenKey, type RunRequest, type RunTokenRecord,
} from '../../clc/core/runTokens.js';

const REQ: RunRequest = { imageId: 'emi-00000001', instanceType: 'm1.small', minCount: 1, maxCount: 2 };
const T0 = 1_000_000;

function record(request: RunRequest = REQ, createdAt = T0): RunTokenRecord {
  return { token: 'tok', ownerId: '000000000000', request, reservationId: 'r-00000001', partition: 'cluster01', instanceIds: ['i-00000002'], createdAt };
}

describe('judgeRunToken', () => {
  const cases: [string, RunTokenRecord | undefined, RunRequest, number, string, string[]?][] = [
    ['a token never used launches', undefined, REQ, T0, 'new'],
    ['the same parameters repeat the reservation', record(), REQ, T0 + 1000, 'repeat'],
    ['a repeat just before the retention ends', record(), REQ, T0 + RUN_TOKEN_RETENTION_MS - 1, 'repeat'],
    ['a token past its retention launches again', record(), REQ, T0 + RUN_TOKEN_RETENTION_MS, 'new'],
    ['another image is a mismatch', record(), { ...REQ, imageId: 'emi-00000002' }, T0, 'mismatch', ['ImageId emi-00000001 then emi-00000002']],
    ['another count is a mismatch', record(), { ...REQ, maxCount: 3 }, T0, 'mismatch', ['MaxCount 2 then 3']],
    ['naming a zone the first did not name is a mismatch', record(), { ...REQ, zone: 'cluster02' }, T0, 'mismatch',
      ['Placement.AvailabilityZone (none) then cluster02']],
    ['two differences are both named', record({ ...REQ, zone: 'cluster01' }), { ...REQ, instanceType: 'c1.medium' }, T0, 'mismatch',
      ['InstanceType m1.small then c1.medium', 'Placement.AvailabilityZone cluster01 then (none)']],
  ];
  it.each(cases)('%s', (_name, rec, req, now, kind, differences) => {
    const v = judgeRunToken(rec, req, now);
    expect(v.kind).toBe(kind);
    if (v.kind === 'mismatch') expect(v.differences).toEqual(differences);
    if (v.kind === 'repeat') expect(v.record).toBe(rec);
  });

  it('keeps tokens per account', () => {
    expect(runTokenKey('111111111111', 'a')).not.toBe(runTokenKey('000000000000', 'a'));
  });

  it('forgets only the records past their retention', () => {
    const d: Record<string, RunTokenRecord> = { old: record(REQ, T0), young: record(REQ, T0 + 10) };
    forgetExpiredRunTokens(d, T0 + RUN_TOKEN_RETENTION_MS + 5);
    expect(Object.keys(d)).toEqual(['young']);
  });

  it.each([['a', true], ['x'.repeat(64), true], ['x'.repeat(65), false], ['', false], ['with space', false], ['tab\t', false], ['é', false]])(
    'token %j is well formed: %s', (token, ok) => expect(CLIENT_TOKEN_PATTERN.test(token)).toBe(ok),
  );
});

describe('KeyedMutex', () => {
  it('runs one at a time per key, in arrival order, and other keys at once', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((r) => { releaseFirst = r; });
    const a1 = m.run('a', async () => { log.push('a1 start'); await firstHeld; log.push('a1 end'); });
    const a2 = m.run('a', () => { log.push('a2'); return Promise.resolve(); });
    const b = m.run('b', () => { log.push('b'); return Promise.resolve(); });
    await b;
    expect(log).toEqual(['a1 start', 'b']);
    releaseFirst();
    await Promise.all([a1, a2]);
    expect(log).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
    expect(m.size).toBe(0);
  });

  it('lets the next request run after one fails, and passes the failure to its caller only', async () => {
    const m = new KeyedMutex();
    const failed = m.run('k', () => Promise.reject(new Error('boom')));
    const next = m.run('k', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
    expect(m.size).toBe(0);
  });
});
