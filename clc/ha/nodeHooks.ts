/**
 * Where host HA meets the admin actions that change a node (issue 6), as a narrow interface the
 * action context may carry: EnableService of a fenced host first has its obsolete copies destroyed
 * and then moves HA on from FENCED (the machine's `unfenced`); MigrateInstances never sends an
 * instance to a host HA is fencing or has fenced. Absent (tests, a CLC without HA): no effect.
 */
export interface HaNodeHooks {
  /** Before EnableService changes the node; throws a coded ClcError to refuse it. */
  beforeEnable(host: string, partition: string): Promise<void>;
  /** After EnableService succeeded. */
  afterEnable(host: string, partition: string): Promise<void>;
  /** Hosts that are FENCING or FENCED now. */
  fencedHosts(): ReadonlySet<string>;
}
