/** `--wait`: polls DescribeMigrations for one migration until every item is final, showing each reading. */
import { UnexpectedResponse } from './failures.js';
import type { ProgressDisplay } from './progressDisplay.js';
import type { QueryClient } from './queryClient.js';
import { readResponse, type MigrationReading } from './responses.js';

export interface WatchOptions {
  readonly client: QueryClient;
  readonly url: string;
  readonly migrationId: string;
  readonly pollMs: number;
  readonly display: ProgressDisplay;
  readonly sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves with the finished migration (state completed or incomplete); the display is stopped either way. */
export async function watchMigration(o: WatchOptions): Promise<MigrationReading> {
  const sleep = o.sleep ?? realSleep;
  try {
    for (;;) {
      const r = readResponse('DescribeMigrations', await o.client.call('DescribeMigrations', { 'MigrationId.1': o.migrationId }), o.url);
      const m = r.migrationSet.find((x) => x.migrationId === o.migrationId);
      if (!m) throw new UnexpectedResponse(o.url, `DescribeMigrations did not list ${o.migrationId}`);
      o.display.show(m);
      if (m.state !== 'active') return m;
      await sleep(o.pollMs);
    }
  } finally {
    o.display.stop();
  }
}
