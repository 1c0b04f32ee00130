/**
 * What the outside world (the CLC, the operator) was told: acknowledged runs, requested
 * terminations, acknowledged node states, known migrations. Invariants compare the cloud's truth
 * against it; the workload picks its targets from it.
 */
import type { NodeState } from '../shared/protocol/common.js';

export class Ledger {
  /** Instances whose ccRunInstances was acknowledged, in acknowledgement order. */
  readonly instances: string[] = [];
  /** Termination asked (it may have happened even if the answer was lost). */
  readonly terminating = new Set<string>();
  /** Termination acknowledged: the VM must be gone for good. */
  readonly terminated = new Set<string>();
  /** Their host lost power (a fault, a BMC): set aside by "never lost" (Host HA may restart them elsewhere). */
  readonly lostWithHost = new Set<string>();
  /** Hosts a careless operator confirmed fenced while they ran (outside the safety envelope). */
  readonly carelessConfirms = new Set<string>();
  /** Actions that failed with an uncoded error or InternalError (a bug in the CLC). */
  readonly uncoded: string[] = [];
  /** Migration ids the CC answered with. */
  readonly migrations: string[] = [];
  /** Per host: the node state last acknowledged to the caller; undefined while a change is uncertain. */
  readonly nodeState = new Map<string, NodeState | undefined>();

  /** Volumes whose CreateVolume was acknowledged, in order, with their partition (the workload picks from them). */
  readonly volumes: { readonly volumeId: string; readonly partition: string }[] = [];
  /**
   * Per instance: what its user was last told of its power (issue 18 part 5). `stopped`: a stop was
   * acknowledged and no start asked since; `unsure`: a stop or start was asked and its outcome is
   * unknown (a lost answer, a request overtaken); absent or `running`: never stopped, or started again.
   */
  readonly power = new Map<string, 'stopped' | 'running' | 'unsure'>();
  /** Requests sent per instance, so an answer knows whether a later one overtook it. */
  private readonly powerAsked = new Map<string, number>();

  /** A stop or start is sent; the answer's callbacks settle what the ledger believes. */
  powerSent(id: string, target: 'stopped' | 'running'): { readonly acknowledged: () => void; readonly refused: () => void } {
    const before = this.power.get(id);
    const n = (this.powerAsked.get(id) ?? 0) + 1;
    this.powerAsked.set(id, n);
    this.power.set(id, 'unsure');
    // Requests for one instance that overlap may run in any order at its NC (sim seed 657): none of them settles it.
    const open = this.powerOpen.get(id) ?? new Map<number, { raced: boolean }>();
    this.powerOpen.set(id, open);
    const mine = { raced: open.size > 0 };
    for (const other of open.values()) other.raced = true;
    open.set(n, mine);
    const latest = (): boolean => this.powerAsked.get(id) === n;
    const close = (): void => { open.delete(n); };
    return {
      acknowledged: () => {
        close();
        if (latest() && !mine.raced) this.power.set(id, target);
      },
      // Refused before anything was done (a client fault): what it was before still holds.
      refused: () => {
        close();
        if (!latest() || mine.raced) return;
        if (before === undefined) this.power.delete(id);
        else this.power.set(id, before);
      },
    };
  }

  /** Per instance: its stop and start requests not answered yet (a request without an answer stays open). */
  private readonly powerOpen = new Map<string, Map<number, { raced: boolean }>>();

  /** Acknowledged stopped, no start asked since: host HA must never restart it, and it must not run once settled. */
  isStopped(id: string): boolean {
    return this.power.get(id) === 'stopped';
  }

  live(): string[] {
    return this.instances.filter((i) => !this.terminating.has(i));
  }

  acknowledgeRun(ids: readonly string[]): void {
    for (const id of ids) if (!this.instances.includes(id)) this.instances.push(id);
  }

  /** Modify requests that reached each NC, per requested state (duplicates included). */
  private readonly delivered = new Map<string, number>();

  /** A modify request reached the NC (maybe a late duplicate): the state is uncertain until the next acknowledgement. */
  modifyDelivered(host: string, state: NodeState): void {
    const key = `${host} ${state}`;
    this.delivered.set(key, (this.delivered.get(key) ?? 0) + 1);
    if (this.nodeState.get(host) !== state) this.nodeState.set(host, undefined);
  }

  /** The host's nc.json was lost: whatever was acknowledged, the node comes back disabled (issue 16). */
  storeLost(host: string): void {
    this.nodeState.set(host, 'disabled');
    this.storesLost.add(host);
    this.losses.set(host, (this.losses.get(host) ?? 0) + 1);
  }

  /** Per host: how many times its nc.json was lost (a modify acknowledged across a loss is uncertain). */
  private readonly losses = new Map<string, number>();

  /**
   * Hosts whose nc.json was lost: the re-adopted records no longer carry a user's stop (`userStopped`);
   * the CLC's `stoppedAt` still keeps it, so host HA leaves the instance off (docs/SIMULATION.md, known limits).
   */
  readonly storesLost = new Set<string>();

  /** Call when a modify is sent; its acknowledgement then knows whether an opposite request overtook it. */
  modifySent(host: string, state: NodeState): () => void {
    const opposite = `${host} ${state === 'enabled' ? 'disabled' : 'enabled'}`;
    const before = this.delivered.get(opposite) ?? 0;
    const lossesBefore = this.losses.get(host) ?? 0;
    return () => {
      // An opposite request that reached the NC since this one was sent may have landed after it.
      const overtaken = (this.delivered.get(opposite) ?? 0) !== before;
      // The NC persisted the state before answering, but nc.json may have been lost after that write and
      // before the answer came back: the node then restarts disabled, so only `disabled` is still certain.
      const lostSince = (this.losses.get(host) ?? 0) !== lossesBefore;
      this.nodeState.set(host, overtaken || (lostSince && state !== 'disabled') ? undefined : state);
    };
  }
}
