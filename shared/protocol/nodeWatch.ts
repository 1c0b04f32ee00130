/**
 * The node watch (issue 19): a WebSocket the CC keeps open to each NC, at NC_WATCH_PATH on the NC's
 * own port and behind the same mutual TLS (only a `cc` certificate may open it). It carries the CC's
 * polls in their cheapest form: the CC sends the version of the NC's report it holds, the NC runs its
 * describe as an ncDescribeResource would (listing its domains, reconciling) and answers the version
 * of its report now, with the report itself only when that is another version. The same version means
 * the CC's copy is current and the node is seen again. An exchange costs each side about a quarter of
 * an HTTPS request's CPU (no request object, headers, parser or agent), and one connection per NC is
 * all the polling needs: this is what lets one CC core supervise 10,000 hosts at a 10 s period.
 *
 * Messages are JSON text frames, one check and one answer at a time per connection:
 *   CC → NC  {"check": <seq>, "known": "<version>"}     (`known` absent: the CC holds no report)
 *   NC → CC  {"seq": <seq>, "version": "<version>"}     (the report the CC holds is current)
 *            {"seq": <seq>, "version": "<version>", "report": {…ncDescribeResource's answer…}}
 * A check that is not one of these, larger than WATCH_MAX_MESSAGE_BYTES, or sent while one is
 * unanswered, closes the connection with WATCH_CLOSE_CODES.badMessage and a reason naming the code.
 * An answer that breaks the contract makes the CC close the connection and describe the NC instead.
 */
import { z } from 'zod';
import { NC_PATH } from '../wire/transport.js';
import { DEFAULT_DECODE_LIMITS } from '../wire/wireDecoder.js';
import { ncNodeSchema } from './ncProtocol.js';

export const NC_WATCH_PATH = `${NC_PATH}/watch`;

/** A check is a few dozen bytes; anything larger is refused by the NC's WebSocket layer itself. */
export const WATCH_MAX_MESSAGE_BYTES = 512;

/** An answer may carry a whole report: bounded as an ordinary call's answer is. */
export const WATCH_MAX_ANSWER_BYTES = DEFAULT_DECODE_LIMITS.maxBytes;

/** Report versions are `<boot id>-<counter>` (shared/listingVersions.ts); bounded so a check stays small. */
const versionSchema = z.string().min(1).max(128);

export const watchCheckSchema = z.object({ check: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), known: versionSchema.optional() }).strict();
export type WatchCheck = z.infer<typeof watchCheckSchema>;

export const watchAnswerSchema = z.object({
  seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  version: versionSchema,
  /** Present exactly when `version` is not the check's `known`. */
  report: ncNodeSchema.optional(),
}).strict();
export type WatchAnswer = z.infer<typeof watchAnswerSchema>;

/** WebSocket close codes the NC uses (RFC 6455: 1008 policy violation; 1011 the server failed). */
export const WATCH_CLOSE_CODES = Object.freeze({ badMessage: 1008, failed: 1011, shutdown: 1001 });

/** The close reasons, coded: the CC logs them, an operator greps them (docs/API.md, "The node watch"). */
export const WATCH_CLOSE_REASONS = Object.freeze({
  badMessage: 'WatchBadMessage',
  overlapping: 'WatchCheckOverlaps',
  describeFailed: 'WatchDescribeFailed',
  shutdown: 'WatchShutdown',
});

/**
 * One text frame read as a message of `schema`: zod's result, its failure naming where (a frame that
 * is binary, absent or not JSON fails as "not JSON"). Both ends read their frames through this.
 */
export function parseWatchFrame<T extends z.ZodType>(schema: T, text: string | undefined): z.ZodSafeParseResult<z.output<T>> {
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return schema.safeParse(undefined);
  }
  return schema.safeParse(parsed);
}
