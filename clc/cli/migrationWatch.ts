/**
 * `--wait`: polls DescribeMigrations for one migration until every item is final, showing each
 * reading. The wait between asks grows with the watch's age (a tenth of it, at least
 * MIN_POLL_MS, at most the caller's pollMs): the end of a migration of a few seconds is seen within
 * a few hundred ms, where a fixed 1 s poll added half a second on average (issue 19's
 * migration-libvirt bench), and a long drain is still asked only once per pollMs.
 */
import { UnexpectedResponse } from './failures.js';
import type { ProgressDisplay } from './progressDisplay.js';
import type { QueryClient } from './queryClient.js';
import type { MigrationReading } from './responses.js';

export interface WatchOptions {
  readonly client: Pick<QueryClient, 'call'>;
  readonly url: string;
  readonly migrationId: string;
  /** The longest wait between two asks. */
  readonly pollMs: number;
  readonly display: ProgressDisplay;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Milliseconds on a monotonic clock (performance.now by default). */
  readonly now?: () => number;
}

/** The shortest wait between two asks: one DescribeMigrations (a CC round trip per partition) costs a few ms. */
export const MIN_POLL_MS = 100;
/** The wait is this share of the time watched so far: the end is seen at most ~10 % late. */
const AGE_SHARE = 0.1;

/** How long to wait before the next ask, `ageMs` into the watch (pure). */
export function nextPollMs(ageMs: number, pollMs: number): number {
  return Math.min(pollMs, Math.max(MIN_POLL_MS, Math.round(ageMs * AGE_SHARE)));
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves with the finished migration (state completed or incomplete); the display is stopped either way. */
export async function watchMigration(o: WatchOptions): Promise<MigrationReading> {
  const sleep = o.sleep ?? realSleep;
  const now = o.now ?? (() => performance.now());
  const started = now();
  try {
    // Loaded on first use (euca-migrate-instances loads it while its request is under way).
    const { readResponse } = await import('./responses.js');
    for (;;) {
      const r = readResponse('DescribeMigrations', await o.client.call('DescribeMigrations', { 'MigrationId.1': o.migrationId }), o.url);
      const m = r.migrationSet.find((x) => x.migrationId === o.migrationId);
      if (!m) throw new UnexpectedResponse(o.url, `DescribeMigrations did not list ${o.migrationId}`);
      o.display.show(m);
      if (m.state !== 'active') return m;
      await sleep(nextPollMs(now() - started, o.pollMs));
    }
  } finally {
    o.display.stop();
  }
}
