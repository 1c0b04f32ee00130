/**
 * Where host HA meets the core operations that change a node (issue 6), as a narrow interface an
 * operation's context may carry (clc/core/operationContext.ts), defined here, below HA, and built by
 * clc/ha/haRuntime.ts: EnableService of a fenced host first has its obsolete copies destroyed and
 * then moves HA on from FENCED (the machine's `unfenced`); MigrateInstances never sends an instance
 * to a host HA is fencing or has fenced. Absent (tests, a CLC without HA, HA's own changes): no effect.
 */
export interface HaNodeHooks {
  /** Before EnableService changes the node; throws a coded error (clc/ha/errors.ts) to refuse it. */
  beforeEnable(host: string, partition: string): Promise<void>;
  /** After EnableService succeeded. */
  afterEnable(host: string, partition: string): Promise<void>;
  /** Hosts that are FENCING or FENCED now. */
  fencedHosts(): ReadonlySet<string>;
}
