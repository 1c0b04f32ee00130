/** ferry-heartbeat's flags, compiled once (STYLE habit 7). */
import { resolve } from 'node:path';
import { z } from 'zod';
import { compileConfig } from '../../../shared/config/compileConfig.js';
import { flagNames, intFlag, readFlags, type FlagField } from '../../../shared/config/flagTable.js';
import { isSafeName } from './beatPlan.js';

export interface HeartbeatProcessConfig {
  readonly host: string;
  readonly storageDir: string;
  readonly libvirtRunDir: string;
  readonly intervalMs: number;
}

const FIELDS: readonly FlagField[] = [
  ['host', '--host <name>', 'FERRY_HEARTBEAT_HOST', 'this host\'s name on shared storage: its NC\'s address (required)'],
  ['storageDir', '--storage-dir <dir>', 'FERRY_HEARTBEAT_STORAGE_DIR', 'the shared storage root (the NCs\' --storage-dir; required)'],
  ['libvirtRunDir', '--libvirt-run-dir <dir>', 'FERRY_HEARTBEAT_LIBVIRT_RUN_DIR', 'libvirtd\'s runtime directory (default /run/libvirt)'],
  ['intervalMs', '--interval-ms <ms>', 'FERRY_HEARTBEAT_INTERVAL_MS', 'time between heartbeats (default 2000)'],
];

const schema = z.object({
  host: z.string({ error: 'is required' }).refine(isSafeName, 'must be a plain name (no "/", not starting with ".")'),
  storageDir: z.string({ error: 'is required' }).min(1, 'must name a directory').transform((p) => resolve(p)),
  libvirtRunDir: z.string().min(1, 'must name a directory').default('/run/libvirt').transform((p) => resolve(p)),
  intervalMs: intFlag(2000, 100, 600_000),
});

export function parseHeartbeatConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, out?: (s: string) => void): HeartbeatProcessConfig {
  const raw = readFlags({ name: 'ferry-heartbeat', envPrefix: 'FERRY_HEARTBEAT_', description: 'Host heartbeat and VM activity links on shared storage, for host HA', fields: FIELDS, ...(out ? { out } : {}) }, argv, env);
  return compileConfig(schema, raw, flagNames(FIELDS));
}
