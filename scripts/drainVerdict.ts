/**
 * Whether a drain left every instance running exactly once (the replicated demo's check, issue 21):
 * from where each VM ran before and after, according to the hypervisors (the ground truth). Pure.
 */

export interface DrainFacts {
  /** Instance id → the hosts running it, before the drain. */
  readonly before: ReadonlyMap<string, readonly string[]>;
  /** The same, after the drain ended. */
  readonly after: ReadonlyMap<string, readonly string[]>;
  /** The drained host. */
  readonly source: string;
  /** The migration's final state as DescribeMigrations shows it (completed, failed, cancelled, ...). */
  readonly migrationState: string;
}

/** What is wrong, one line each; empty when nothing was lost, duplicated, left behind or added. */
export function drainProblems(f: DrainFacts): string[] {
  const problems: string[] = [];
  for (const [id, was] of f.before) {
    const hosts = f.after.get(id) ?? [];
    if (hosts.length === 0) problems.push(`${id} is lost: it runs nowhere`);
    else if (hosts.length > 1) problems.push(`${id} is duplicated: it runs on ${hosts.join(' and ')}`);
    else if (f.migrationState === 'completed' && was.includes(f.source) && hosts[0] === f.source) problems.push(`${id} still runs on the drained ${f.source}`);
  }
  for (const [id, hosts] of f.after) if (!f.before.has(id)) problems.push(`${id} runs on ${hosts.join(' and ')} but did not before the drain`);
  if (f.migrationState !== 'completed') problems.push(`the drain ended ${f.migrationState}, not completed`);
  return problems;
}
