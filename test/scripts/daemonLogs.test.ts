/** Daemon log files (scripts/daemon.ts): created 0640 at most, older wider ones narrowed, still readable by their owner. */
import { chmodSync, closeSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOG_FILE_MODE, openLogFile, spawnDaemon, stopPid } from '../../scripts/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const modeOf = (f: string): number => statSync(f).mode & 0o777;

describe('daemon log files', () => {
  it('are created with no more than 0640, in a directory no more than 0750', () => {
    const file = join(dir, 'new', 'logs', 'clc.log');
    closeSync(openLogFile(file));
    expect(modeOf(file) & ~LOG_FILE_MODE).toBe(0);
    expect(modeOf(file) & 0o600).toBe(0o600);
    expect(modeOf(join(dir, 'new', 'logs')) & ~0o750).toBe(0);
  });

  it.each([[0o644, 0o640], [0o666, 0o640], [0o600, 0o600], [0o640, 0o640]])('narrow a log left %s to %s, never widening it', (before, after) => {
    const file = join(dir, `old-${before.toString(8)}.log`);
    writeFileSync(file, 'kept\n');
    chmodSync(file, before);
    closeSync(openLogFile(file));
    expect(modeOf(file)).toBe(after);
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
  });

  it('hold what a spawned daemon writes, readable by the tests', async () => {
    const root = join(dir, 'root');
    const script = 'process.stderr.write("a warning\\n"); process.stdout.write("toy listening on x\\n"); setInterval(() => {}, 1000);';
    writeFileSync(join(dir, 'toy.js'), script);
    const d = await spawnDaemon({ name: 'toy', entry: join(dir, 'toy.js'), args: [], ready: 'toy listening on' }, { root, logFile: join(root, 'logs', 'toy.log') });
    try {
      expect(modeOf(d.logFile) & ~LOG_FILE_MODE).toBe(0);
      await expect.poll(() => readFileSync(d.logFile, 'utf8')).toContain('a warning');
    } finally {
      await stopPid(d.pid);
    }
  });
});
