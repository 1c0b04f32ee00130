/**
 * The source host's outgoing migrations by migration id: running ones (abortable) and the outcome
 * of recent finished ones, so a driver that lost its connection can still collect the result.
 */
import type { MigrationStats } from '../driver.js';
import { toCodedResponse } from './errorBody.js';
import { runOutgoingMigration, type OutgoingParams } from './outgoingMigration.js';
import type { MigrationStatus } from './protocol.js';

export interface OutgoingEntry {
  readonly id: string;
  readonly migrationId: string;
  readonly controller: AbortController;
  readonly done: Promise<MigrationStats>;
  /** Updated as the migration progresses and when it settles. */
  status: MigrationStatus;
}

export class OutgoingRegistry {
  private readonly entries = new Map<string, OutgoingEntry>();

  /** Finished outcomes kept for late collectors; bounded so a long-lived host does not grow. */
  constructor(private readonly keepFinished = 256) {}

  get(migrationId: string): OutgoingEntry | undefined {
    return this.entries.get(migrationId);
  }

  running(): OutgoingEntry[] {
    return [...this.entries.values()].filter((e) => e.status.state === 'running');
  }

  start(params: Omit<OutgoingParams, 'signal'>): OutgoingEntry {
    const controller = new AbortController();
    const status: MigrationStatus = { state: 'running' };
    const entry = { id: params.spec.id, migrationId: params.target.migrationId, controller, status } as OutgoingEntry;
    const done = runOutgoingMigration({
      ...params,
      signal: controller.signal,
      onProgress: (progress) => {
        entry.status = { state: 'running', progress };
        params.onProgress(progress);
      },
    });
    (entry as { done: Promise<MigrationStats> }).done = done;
    done.then(
      (stats) => {
        entry.status = { state: 'completed', stats };
      },
      (err: unknown) => {
        entry.status = { state: 'failed', error: toCodedResponse(err).body.error };
      },
    );
    this.entries.set(entry.migrationId, entry);
    this.prune();
    return entry;
  }

  private prune(): void {
    let finished = [...this.entries.values()].filter((e) => e.status.state !== 'running').length;
    for (const [key, e] of this.entries) {
      if (finished <= this.keepFinished) break;
      if (e.status.state === 'running') continue;
      this.entries.delete(key);
      finished--;
    }
  }
}
