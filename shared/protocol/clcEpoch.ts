/**
 * The CLC leader's epoch on the CLC → CC wire (issue 21, no split brain): the fencing token a CLC
 * replica sends with every command that changes a node or an instance, so a CC obeys no deposed
 * leader. It is the create revision of the leader's etcd election key, as a decimal string (etcd
 * revisions are int64: at most 19 digits, never negative). The file-store single CLC sends none.
 * Reads carry nothing.
 */
import { z } from 'zod';

/** A decimal int64 without leading zeros: etcd's revision as etcd3 reports it. */
export const clcEpochSchema = z.string().regex(/^(0|[1-9][0-9]{0,18})$/, 'expected a decimal epoch (an etcd revision)');

/** Spread into a mutating request's schema: the sender's epoch, absent from the single CLC and from CLCs before epochs. */
export const clcEpochField = { clcEpoch: clcEpochSchema.optional() } as const;

/** Where an offered epoch stands against the highest one seen (compared as integers, not as strings: "10" > "9"). */
export type EpochStanding =
  /** Older than one seen already: sent by a deposed leader. */
  | 'stale'
  /** The highest seen: the current leader (or one that has not been succeeded yet). */
  | 'current'
  /** Higher than any seen: a new leader's first command here. */
  | 'newer';

/** The pure rule: `highest` undefined means none was seen yet. */
export function epochStanding(highest: string | undefined, offered: string): EpochStanding {
  if (highest === undefined) return 'newer';
  const a = BigInt(offered);
  const b = BigInt(highest);
  return a < b ? 'stale' : a === b ? 'current' : 'newer';
}

/** The larger of two epochs (undefined counts as lower than any). */
export function maxEpoch(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BigInt(a) >= BigInt(b) ? a : b;
}
