/**
 * EC2 idempotency for RunInstances (`ClientToken`): what a token was first used for, and what a
 * request that carries it again gets. Pure: the action reads the record, asks `judgeRunToken`, and
 * writes the record in the same store update as the instance records it launches.
 *
 * Rules (EC2's): a token belongs to the account that used it; the same token with the same
 * parameters answers with the original reservation and launches nothing; with other parameters it is
 * IdempotentParameterMismatch. A launch the CC refused leaves no record, so its token can be retried.
 * Records are kept at least RUN_TOKEN_RETENTION_MS, and forgotten after it when the next token is
 * written, so the table is as long as one day's launches and never refuses anyone.
 */
import { z } from 'zod';
import { instanceIdSchema, partitionSchema, reservationIdSchema } from '../../shared/protocol/common.js';
import { tagSchema, type Tag } from './userTags.js';

/** EC2 keeps a token at least 24 hours; so does Ferry, counted from the first request. */
export const RUN_TOKEN_RETENTION_MS = 24 * 60 * 60_000;
/** EC2's limit: up to 64 ASCII characters. */
export const CLIENT_TOKEN_PATTERN = /^[\x21-\x7e]{1,64}$/;

/** The parameters a token is bound to: what RunInstances was asked, not what it chose (the zone it picked). */
export const runRequestSchema = z.object({
  imageId: z.string(),
  instanceType: z.string(),
  minCount: z.number().int(),
  maxCount: z.number().int(),
  /** Placement.AvailabilityZone as given; absent when the CLC chose. */
  zone: z.string().optional(),
  /**
   * The instances' TagSpecification tags, in key order; absent when none (and in records written
   * before tags, which so bind a token to "no tags").
   */
  tags: z.array(tagSchema).optional(),
});
export type RunRequest = z.infer<typeof runRequestSchema>;

export const runTokenRecordSchema = z.object({
  token: z.string(),
  ownerId: z.string(),
  request: runRequestSchema,
  reservationId: reservationIdSchema,
  partition: partitionSchema,
  /** The instances this token launched (those the CC started, once it answered). */
  instanceIds: z.array(instanceIdSchema),
  /** Epoch ms of the first request. */
  createdAt: z.number(),
});
export type RunTokenRecord = z.infer<typeof runTokenRecordSchema>;

/** Tokens are per account, as in EC2: one account's token never answers for another's. */
export function runTokenKey(ownerId: string, token: string): string {
  return `${ownerId}/${token}`;
}

export type RunTokenVerdict =
  /** Never used (or forgotten): launch, and record the token with the launch. */
  | { readonly kind: 'new' }
  /** Used with these parameters: answer with the original reservation, launch nothing. */
  | { readonly kind: 'repeat'; readonly record: RunTokenRecord }
  /** Used with other parameters: refuse, naming what differs. */
  | { readonly kind: 'mismatch'; readonly differences: readonly string[] };

const NONE = '(none)';

/** Tags as the request named them, each key and value quoted so no two lists read alike. */
function showTags(tags: readonly Tag[] | undefined): string {
  return tags === undefined || tags.length === 0 ? NONE : tags.map((t) => `${JSON.stringify(t.key)}=${JSON.stringify(t.value)}`).join(' ');
}

/** Each bound parameter by its AWS name, as shown in a mismatch; equal shown forms are equal parameters. */
const BOUND: readonly (readonly [string, (r: RunRequest) => string])[] = [
  ['ImageId', (r) => r.imageId],
  ['InstanceType', (r) => r.instanceType],
  ['MinCount', (r) => String(r.minCount)],
  ['MaxCount', (r) => String(r.maxCount)],
  ['Placement.AvailabilityZone', (r) => r.zone ?? NONE],
  ['TagSpecification', (r) => showTags(r.tags)],
];

/** Which parameters of `now` differ from the token's first request, by their AWS names. */
export function requestDifferences(first: RunRequest, now: RunRequest): string[] {
  return BOUND.flatMap(([name, show]) => (show(first) === show(now) ? [] : [`${name} ${show(first)} then ${show(now)}`]));
}

export function isLive(record: RunTokenRecord, now: number): boolean {
  return now - record.createdAt < RUN_TOKEN_RETENTION_MS;
}

export function judgeRunToken(record: RunTokenRecord | undefined, request: RunRequest, now: number): RunTokenVerdict {
  if (record === undefined || !isLive(record, now)) return { kind: 'new' };
  const differences = requestDifferences(record.request, request);
  return differences.length === 0 ? { kind: 'repeat', record } : { kind: 'mismatch', differences };
}

/** Drops the records past their retention from `records` (a store draft), in place. */
export function forgetExpiredRunTokens(records: Record<string, RunTokenRecord>, now: number): void {
  for (const [key, r] of Object.entries(records)) if (!isLive(r, now)) delete records[key];
}
