/** Schemas both sides of a tier boundary validate against (the wire contract, not anyone's internals). */
import { z } from 'zod';

export const resourcesSchema = z.object({
  cores: z.number().int().min(0),
  memoryMiB: z.number().int().min(0),
  diskGiB: z.number().int().min(0),
});

export const vmTypeSchema = resourcesSchema.extend({
  name: z.string().regex(/^[a-z0-9]+\.[a-z0-9]+$/),
  cores: z.number().int().min(1),
  memoryMiB: z.number().int().min(1),
  diskGiB: z.number().int().min(1),
});

export const instanceIdSchema = z.string().regex(/^i-[0-9a-f]{8}$/, 'expected i- and 8 hex digits');
export const reservationIdSchema = z.string().regex(/^r-[0-9a-f]{8}$/, 'expected r- and 8 hex digits');
/** Node hosts are loopback addresses on one machine (127.0.1.N); any IPv4 literal on real clouds. */
export const hostSchema = z.string().regex(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, 'expected an IPv4 address');
export const partitionSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'expected a partition name');

/** Node state as the NC persists it (Eucalyptus 3.3 maintenance mode). */
export const nodeStateSchema = z.enum(['enabled', 'disabled']);
export type NodeState = z.infer<typeof nodeStateSchema>;

/** Instance states, EC2's names. */
export const instanceStateSchema = z.enum(['pending', 'running', 'stopped', 'shutting-down', 'terminated']);
export type InstanceState = z.infer<typeof instanceStateSchema>;

/** Per-instance migration state (Eucalyptus 3.3 spec); only 'none' until live migration lands. */
export const migrationStateSchema = z.enum(['none', 'preparing', 'ready', 'migrating', 'cleaning']);
export type MigrationState = z.infer<typeof migrationStateSchema>;
