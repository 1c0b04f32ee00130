/** The CLC leader's epoch on the CLC → CC wire (issue 21): the pure compare, the schema, and which operations carry it. */
import { describe, expect, it } from 'vitest';
import { CC_EPOCH_OPS, CC_OPS, type CcOp } from '../../shared/protocol/ccProtocol.js';
import { clcEpochSchema, epochStanding, maxEpoch, type EpochStanding } from '../../shared/protocol/clcEpoch.js';

const INT64_MAX = '9223372036854775807';

describe('epochStanding (compared as integers, not strings)', () => {
  const rows: [string | undefined, string, EpochStanding][] = [
    [undefined, '0', 'newer'],
    [undefined, '41', 'newer'],
    ['41', '41', 'current'],
    ['41', '40', 'stale'],
    ['41', '42', 'newer'],
    // As strings "9" > "10": a string compare would call the new leader stale.
    ['9', '10', 'newer'],
    ['10', '9', 'stale'],
    ['99', '100', 'newer'],
    ['0', '0', 'current'],
    // Beyond 2^53: Number would round these to one value.
    ['9007199254740993', '9007199254740992', 'stale'],
    ['9007199254740992', '9007199254740993', 'newer'],
    [INT64_MAX, INT64_MAX, 'current'],
    ['9223372036854775806', INT64_MAX, 'newer'],
  ];
  it.each(rows)('highest %s, offered %s → %s', (highest, offered, standing) => {
    expect(epochStanding(highest, offered)).toBe(standing);
  });

  it('maxEpoch picks the larger by value; undefined is lower than any', () => {
    expect(maxEpoch('9', '10')).toBe('10');
    expect(maxEpoch('10', '9')).toBe('10');
    expect(maxEpoch(undefined, '3')).toBe('3');
    expect(maxEpoch('3', undefined)).toBe('3');
    expect(maxEpoch(undefined, undefined)).toBeUndefined();
  });
});

describe('clcEpochSchema', () => {
  it.each(['0', '1', '42', INT64_MAX])('accepts %s', (v) => {
    expect(clcEpochSchema.safeParse(v).success).toBe(true);
  });
  it.each(['', '-1', '01', '1e3', '4.2', ' 7', '0x10', '12345678901234567890', 'seven'])('refuses %j', (v) => {
    expect(clcEpochSchema.safeParse(v).success).toBe(false);
  });
});

describe('which CC operations carry the epoch', () => {
  const READS: readonly CcOp[] = ['ccDescribeNodes', 'ccDescribeNodeHealth', 'ccDescribeResources', 'ccDescribeInstances', 'ccDescribeMigrations', 'ccCheckHostActivity', 'ccNodeEvent', 'ccDescribeReplica'];
  const shapeOf = (op: CcOp): Record<string, unknown> => (CC_OPS[op].request as unknown as { shape: Record<string, unknown> }).shape;

  it('every operation is either a change that carries it or one of the reads', () => {
    const all = Object.keys(CC_OPS) as CcOp[];
    expect([...all].sort()).toEqual([...CC_EPOCH_OPS, ...READS].sort());
  });

  it.each([...CC_EPOCH_OPS])('%s: its request keeps clcEpoch (not stripped by the contract) and refuses a bad one', (op) => {
    expect(shapeOf(op)).toHaveProperty('clcEpoch');
    const parsed = CC_OPS[op].request.safeParse({ clcEpoch: 'nine' });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(parsed.error.issues.some((i) => i.path[0] === 'clcEpoch')).toBe(true);
  });

  it.each(READS)('%s carries none', (op) => {
    expect(shapeOf(op)).not.toHaveProperty('clcEpoch');
  });
});
