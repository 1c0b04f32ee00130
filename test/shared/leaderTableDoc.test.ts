/** docs/ARCHITECTURE.md's leadership table against the machine's own table: a cell is "—" exactly where the state refuses the event. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { acceptedEvents, type LeaderEvent, type LeaderState } from '../../shared/leader/leaderMachine.js';

const STATES: readonly LeaderState[] = ['idle', 'campaigning', 'leader', 'backoff', 'stopped'];

describe('docs/ARCHITECTURE.md leadership table', () => {
  it('has a row per state whose empty cells are the events shared/leader/leaderMachine.ts refuses', () => {
    const doc = readFileSync(new URL('../../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('### Leadership and epochs'));
    const lines = section.split('\n').filter((l) => l.startsWith('|'));
    const header = (lines[0] ?? '').split('|').slice(2, -1).map((h) => h.trim());
    // A column may name several events ("granted / keepalive"; "tick (deadline)").
    const columns = header.map((h) => h.split('/').map((e) => e.trim().split(' ')[0] as LeaderEvent['type']));
    expect(columns.flat().sort()).toEqual(['elected', 'failed', 'granted', 'keepalive', 'resign', 'retry', 'start', 'tick']);
    for (const state of STATES) {
      const row = lines.find((l) => l.startsWith(`| ${state} |`));
      expect(row, `a row for ${state}`).toBeDefined();
      const cells = (row ?? '').split('|').slice(2, -1).map((c) => c.trim());
      const accepted = new Set(acceptedEvents(state));
      columns.forEach((events, i) => {
        const documented = cells[i] !== '—';
        expect(documented, `${state} × ${events.join('/')}`).toBe(events.some((e) => accepted.has(e)));
      });
    }
  });
});
