/**
 * Move repair (issue 18): level-based finishing of a re-home (rehome.ts: StartInstances elsewhere, a
 * drain's cold move) that a CC crash, an NC crash or a lost answer interrupted between its two steps
 * (the new copy made, the old one not yet forgotten), and of a user's terminate that raced a move.
 * Pure: the CC's nodes in, copies to forget out; moveRepairDriver.ts runs them.
 *
 * Every re-homed copy carries `moved` (the node of the copy it replaces, and the move's generation:
 * that copy's + 1), persisted by its NC with the record before the CC may forget it. The rules, in
 * order (each is a row of test/cc/moveRepair.test.ts); only reachable NCs are read and a fenced
 * host's copy is never touched (host HA decides about it):
 *  1. Ended by its user: a tombstone that says `endedBy: user` anywhere → every other copy of the
 *     instance not migrating is forgotten (reason `user`): instance ids are never reused and a
 *     user's terminate is final, so the move's other copy must not outlive it.
 *  2. Replaced: a stopped copy (not migrating) on A, and a copy with a domain (running or stopped)
 *     elsewhere whose `moved.from` is A with a greater generation → forget the one on A (reason
 *     `move`: its NC refuses it unless stopped, so a running guest is never ended this way).
 * Never zero copies: rule 2 needs the newer copy to exist (a pending one, whose create may still
 * fail, does not count); never two: every generation's old copy goes once a newer one exists.
 */
import type { TerminateReason } from '../shared/protocol/ncProtocol.js';
import type { NcInstance } from '../shared/protocol/ncProtocol.js';

/** What the rules read of a node. */
export interface RepairNode {
  readonly host: string;
  readonly reachable: boolean;
  readonly instances: readonly NcInstance[];
}

/** Forget `instanceId`'s copy on `host` (ncTerminateInstance with `reason`). */
export interface ForgetCopy {
  readonly host: string;
  readonly instanceId: string;
  readonly reason: TerminateReason;
  readonly why: string;
}

/** A copy's move generation: 0 for one never re-homed. */
export function generationOf(i: Pick<NcInstance, 'moved'>): number {
  return i.moved?.generation ?? 0;
}

interface Copy {
  readonly host: string;
  readonly instance: NcInstance;
}

/** Its domain exists: created (running) or defined (stopped). A pending copy's create may still fail. */
function hasDomain(i: NcInstance): boolean {
  return i.state === 'running' || i.state === 'stopped';
}

export function forgetKey(f: Pick<ForgetCopy, 'host' | 'instanceId'>): string {
  return `${f.host}/${f.instanceId}`;
}

/** Whether a copy with a domain elsewhere re-homes `instance`'s copy on `host` (rule 2's newer copy): a move of it would be a second. */
export function isReplaced(nodes: readonly RepairNode[], host: string, instance: NcInstance): boolean {
  return nodes.some((n) => n.host !== host && n.instances.some((y) => y.instanceId === instance.instanceId && hasDomain(y)
    && y.moved?.from === host && generationOf(y) > generationOf(instance)));
}

export function moveRepairs(nodes: readonly RepairNode[], fenced: ReadonlySet<string>): ForgetCopy[] {
  const copies = new Map<string, Copy[]>();
  for (const n of nodes) {
    if (!n.reachable) continue;
    for (const instance of n.instances) {
      const list = copies.get(instance.instanceId) ?? [];
      list.push({ host: n.host, instance });
      copies.set(instance.instanceId, list);
    }
  }
  const out: ForgetCopy[] = [];
  for (const [instanceId, list] of copies) {
    if (list.length < 2) continue;
    const mayForget = (c: Copy): boolean => !fenced.has(c.host) && c.instance.migrationState === 'none' && c.instance.state !== 'terminated';
    // Rule 1.
    const ended = list.find((c) => c.instance.state === 'terminated' && c.instance.endedBy === 'user');
    if (ended) {
      for (const c of list) {
        if (mayForget(c)) out.push({ host: c.host, instanceId, reason: 'user', why: `its user terminated it (tombstone on ${ended.host})` });
      }
      continue;
    }
    // Rule 2.
    for (const c of list) {
      if (!mayForget(c) || c.instance.state !== 'stopped') continue;
      const newer = list.find((y) => y.host !== c.host && !fenced.has(y.host) && hasDomain(y.instance)
        && y.instance.moved?.from === c.host && generationOf(y.instance) > generationOf(c.instance));
      if (newer) out.push({ host: c.host, instanceId, reason: 'move', why: `re-homed to ${newer.host} (generation ${generationOf(newer.instance)})` });
    }
  }
  return out;
}
