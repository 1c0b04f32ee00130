/**
 * How `euca-migrate-instances --wait` shows a migration as it runs: on a terminal, one cli-progress
 * bar per instance (bytes moved of its memory, and its state); otherwise (a pipe, a log file) one
 * INSTANCE row each time an instance's state changes, as euca-describe-migrations prints it.
 * cli-progress is loaded only for the bars: a piped --wait starts without it.
 */
import type cliProgress from 'cli-progress';
import { bytesMoved, formatBytes, migrationItemLine } from './migrationFormat.js';
import type { MigrationItemReading, MigrationReading } from './responses.js';

export interface ProgressDisplay {
  /** The migration as last read. */
  show(m: MigrationReading): void;
  /** Done (or given up): leave the terminal as a terminal. */
  stop(): void;
}

/** Items whose state is not the one `seen` holds for them (new ones included). Pure. */
export function changedItems(seen: ReadonlyMap<string, string>, m: MigrationReading): MigrationItemReading[] {
  return m.itemSet.filter((i) => seen.get(i.instanceId) !== i.state);
}

/** One row per state change; the states in `initial` were printed already. */
export function lineDisplay(write: (s: string) => void, initial: MigrationReading): ProgressDisplay {
  const seen = new Map(initial.itemSet.map((i) => [i.instanceId, i.state]));
  return {
    show(m) {
      for (const i of changedItems(seen, m)) {
        seen.set(i.instanceId, i.state);
        write(`${migrationItemLine(i)}\n`);
      }
    },
    stop() {},
  };
}

/** The bar's scale: the instance's memory once the copy reports it; 1 until then. */
function barTotal(i: MigrationItemReading): number {
  return i.progress?.bytesTotal || i.stats?.bytesTransferred || 1;
}

function barValue(i: MigrationItemReading): number {
  return i.state === 'completed' ? barTotal(i) : (i.progress?.bytesTransferred ?? 0);
}

function payload(i: MigrationItemReading): Record<string, string> {
  const moved = bytesMoved(i);
  return {
    instanceId: i.instanceId,
    destination: i.destination || '-',
    state: i.state,
    moved: moved !== undefined ? `${formatBytes(moved)}/${formatBytes(i.progress?.bytesTotal ?? moved)}` : '',
  };
}

export async function barDisplay(stream: NodeJS.WritableStream, initial: MigrationReading): Promise<ProgressDisplay> {
  const { default: cliProgressModule } = await import('cli-progress');
  const multi = new cliProgressModule.MultiBar({
    stream,
    // Short enough for an 80-column terminal: 'i-0a1b2c3d 127.0.1.2 [████░░░░] 100% rolled-back 1.5GiB/2.0GiB'.
    format: '{instanceId} {destination} [{bar}] {percentage}% {state} {moved}',
    barsize: 16,
    hideCursor: true,
    clearOnComplete: false,
    stopOnComplete: false,
    autopadding: true,
    fps: 5,
  }, cliProgressModule.Presets.shades_classic);
  const bars = new Map<string, cliProgress.SingleBar>();
  const show = (m: MigrationReading): void => {
    for (const i of m.itemSet) {
      const bar = bars.get(i.instanceId);
      if (!bar) {
        bars.set(i.instanceId, multi.create(barTotal(i), barValue(i), payload(i)));
        continue;
      }
      bar.setTotal(barTotal(i));
      bar.update(barValue(i), payload(i));
    }
  };
  show(initial);
  return { show, stop: () => multi.stop() };
}
