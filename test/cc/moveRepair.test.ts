/**
 * Move repair (cc/moveRepair.ts): the pure rules as a table, then the driver over fake NCs finishing
 * re-homes that a CC crash or a lost answer interrupted, and a user's terminate that raced one.
 */
import { describe, expect, it } from 'vitest';
import { isReplaced, moveRepairs, type RepairNode } from '../../cc/moveRepair.js';
import type { NcInstance } from '../../shared/protocol/ncProtocol.js';
import { instance, slots } from './fakeNodes.js';
import { CTX, harness, id } from './harness.js';

const A = '127.0.89.1';
const B = '127.0.89.2';
const C = '127.0.89.3';
const I = id(1);

type Copy = Partial<NcInstance>;
const stopped: Copy = { state: 'stopped', hypervisorState: 'shutoff', userStopped: true };
const running: Copy = { state: 'running' };
const tomb = (endedBy?: 'user' | 'move'): Copy => ({ state: 'terminated', hypervisorState: 'missing', ...(endedBy ? { endedBy } : {}) });
const movedFrom = (from: string, generation = 1): Copy => ({ moved: { from, generation } });

function nodes(copies: Partial<Record<string, Copy>>, unreachable: readonly string[] = []): RepairNode[] {
  return [A, B, C].map((host) => {
    const c = copies[host];
    return { host, reachable: !unreachable.includes(host), instances: c ? [{ ...instance(I), ...c }] : [] };
  });
}

interface Row {
  readonly name: string;
  readonly copies: Partial<Record<string, Copy>>;
  readonly fenced?: readonly string[];
  readonly unreachable?: readonly string[];
  /** `reason@host` forgotten, in host order. */
  readonly forget: readonly string[];
}

const ROWS: readonly Row[] = [
  { name: 'one copy: nothing', copies: { A: stopped }, forget: [] },
  { name: 'a cold move cut short: the old stopped copy goes', copies: { [A]: stopped, [B]: { ...stopped, ...movedFrom(A) } }, forget: [`move@${A}`] },
  { name: 'a start elsewhere cut short: the old stopped copy goes', copies: { [A]: stopped, [B]: { ...running, ...movedFrom(A) } }, forget: [`move@${A}`] },
  { name: 'the new copy still pending (its create may fail): the old one stays', copies: { [A]: stopped, [B]: { state: 'pending', ...movedFrom(A) } }, forget: [] },
  { name: 'the new copy ended by a settle (not its user): the old one stays', copies: { [A]: stopped, [B]: { ...tomb(), ...movedFrom(A) } }, forget: [] },
  { name: 'the old copy running (never forgotten by a move)', copies: { [A]: running, [B]: { ...stopped, ...movedFrom(A) } }, forget: [] },
  { name: 'moved from elsewhere: not this copy\'s replacement', copies: { [A]: stopped, [B]: { ...stopped, ...movedFrom(C) } }, forget: [] },
  { name: 'moved back: the newer generation wins', copies: { [A]: { ...stopped, ...movedFrom(B, 2) }, [B]: { ...stopped, ...movedFrom(A, 1) } }, forget: [`move@${B}`] },
  { name: 'an older generation never replaces a newer', copies: { [A]: { ...stopped, ...movedFrom(C, 3) }, [B]: { ...stopped, ...movedFrom(A, 2) } }, forget: [] },
  { name: 'the old copy on a fenced host: host HA decides', copies: { [A]: stopped, [B]: { ...stopped, ...movedFrom(A) } }, fenced: [A], forget: [] },
  { name: 'the new copy on a fenced host is no evidence', copies: { [A]: stopped, [B]: { ...running, ...movedFrom(A) } }, fenced: [B], forget: [] },
  { name: 'the new copy on an unreachable node is no evidence', copies: { [A]: stopped, [B]: { ...running, ...movedFrom(A) } }, unreachable: [B], forget: [] },
  { name: 'the old copy migrating: left alone', copies: { [A]: { ...stopped, migrationState: 'ready' }, [B]: { ...stopped, ...movedFrom(A) } }, forget: [] },
  { name: 'its user ended the old copy while it moved: the new one goes too', copies: { [A]: tomb('user'), [B]: { ...running, ...movedFrom(A) } }, forget: [`user@${B}`] },
  { name: 'its user ended the new copy: the old one goes too', copies: { [A]: stopped, [B]: { ...tomb('user'), ...movedFrom(A) } }, forget: [`user@${A}`] },
  { name: 'a finished move: nothing', copies: { [A]: tomb('move'), [B]: { ...running, ...movedFrom(A) } }, forget: [] },
  { name: 'ended by its user, a copy on a fenced host stays for host HA', copies: { [A]: tomb('user'), [B]: running }, fenced: [B], forget: [] },
  { name: 'ended by its user, a migrating copy waits', copies: { [A]: tomb('user'), [B]: { ...running, migrationState: 'migrating' } }, forget: [] },
  { name: 'a user\'s tombstone on an unreachable node is not read', copies: { [A]: tomb('user'), [B]: running }, unreachable: [A], forget: [] },
];

describe('moveRepairs (the rules)', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const out = moveRepairs(nodes(row.copies, row.unreachable), new Set(row.fenced ?? []));
    expect(out.map((f) => `${f.reason}@${f.host}`).sort()).toEqual([...row.forget].sort());
    for (const f of out) expect(f.instanceId).toBe(I);
  });

  it('isReplaced: only by a copy with a domain elsewhere, moved from that host, of a greater generation', () => {
    const old = { ...instance(I), ...stopped } as NcInstance;
    expect(isReplaced(nodes({ [A]: stopped, [B]: { ...stopped, ...movedFrom(A) } }), A, old)).toBe(true);
    expect(isReplaced(nodes({ [A]: stopped, [B]: { state: 'pending', ...movedFrom(A) } }), A, old)).toBe(false);
    expect(isReplaced(nodes({ [A]: stopped, [B]: { ...stopped, ...movedFrom(C) } }), A, old)).toBe(false);
    expect(isReplaced(nodes({ [A]: stopped, [B]: { ...stopped, ...movedFrom(A) } }), A, { ...old, moved: { from: C, generation: 1 } })).toBe(false);
  });
});

/** id(1) stopped by its user on A; B and C enabled and empty. */
async function stoppedOnA() {
  const h = await harness({ nodes: [[A, slots(2)], [B, slots(2)], [C, slots(2)]] });
  h.fake.nc(A).instances.push({ ...instance(I), ...stopped } as NcInstance);
  await h.keeper.refreshHosts([A, B, C], 500);
  h.fake.calls.length = 0;
  return h;
}

const liveCopies = (h: Awaited<ReturnType<typeof stoppedOnA>>): string[] =>
  [A, B, C].flatMap((host) => h.fake.live(host).filter((i) => i.instanceId === I).map((i) => `${i.state}@${host}`));

describe('MoveRepairDriver over fake NCs', () => {
  it('a CC that crashed between the new copy and the forget: a new CC forgets the old stopped copy, once', async () => {
    const h = await stoppedOnA();
    // What the crash left: the cold move's copy defined on B, the old one still on A.
    h.fake.nc(B).instances.push({ ...instance(I), ...stopped, ...movedFrom(A) } as NcInstance);
    await h.keeper.refreshHosts([B], 500);
    h.service.moveRepair.start();
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([`stopped@${B}`]);
    expect(h.fake.nc(A).instances.find((i) => i.instanceId === I)).toMatchObject({ state: 'terminated', endedBy: 'move' });
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([A]);
    await h.service.moveRepair.stop();
  });

  it('a replica\'s terms (issue 21): stopped, it repairs nothing; started again, it repairs what it finds', async () => {
    const h = await stoppedOnA();
    h.service.moveRepair.start();
    await h.service.moveRepair.stop();
    // Leadership lost: what a crash left is not touched.
    h.fake.nc(B).instances.push({ ...instance(I), ...stopped, ...movedFrom(A) } as NcInstance);
    await h.keeper.refreshHosts([B], 500);
    await h.service.moveRepair.idle();
    expect(h.fake.callsOf('terminate')).toEqual([]);
    // Leadership again: the next term repairs it.
    h.service.moveRepair.start();
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([`stopped@${B}`]);
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([A]);
    await h.service.moveRepair.stop();
  });

  it('StartInstances elsewhere whose forget never reached the old node: the start fails, the repair finishes the move; never zero copies', async () => {
    const h = await stoppedOnA();
    h.fake.nc(A).nodeState = 'disabled';
    await h.keeper.refreshHosts([A], 500);
    // A's NC goes away once the new copy exists: the forget cannot reach it.
    h.fake.gate = (call) => { if (call.op === 'run') h.fake.nc(A).link = 'down'; return Promise.resolve(); };
    await expect(h.ops.ccStartInstance({ instanceId: I }, CTX)).rejects.toMatchObject({ code: 'NodeUnreachable' });
    h.fake.gate = undefined;
    const made = liveCopies(h).find((c) => !c.endsWith(`@${A}`)) ?? '';
    expect(made).toMatch(/^running@/);
    expect(liveCopies(h)).toEqual([`stopped@${A}`, made].sort((x, y) => x.split('@')[1]!.localeCompare(y.split('@')[1]!)));
    const at = made.split('@')[1] ?? '';
    expect(h.fake.live(at)[0]?.moved).toEqual({ from: A, generation: 1 });
    // A is back; the repair forgets its stopped copy, the started one stays.
    h.fake.nc(A).link = 'up';
    await h.keeper.refreshHosts([A, at], 500);
    h.service.moveRepair.start();
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([made]);
    await h.service.moveRepair.stop();
  });

  it('a user\'s terminate that reached the old copy while the new one was made: the new copy ends too', async () => {
    const h = await stoppedOnA();
    h.service.moveRepair.start();
    // The start's new copy on B (as the move made it), and the user's terminate of the old copy on A.
    h.fake.nc(B).instances.push({ ...instance(I), ...running, ...movedFrom(A) } as NcInstance);
    await h.fake.terminateInstance(A, I, 'user');
    await h.keeper.refreshHosts([A, B], 500);
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([]);
    expect(h.fake.nc(B).instances.find((i) => i.instanceId === I)).toMatchObject({ state: 'terminated', endedBy: 'user' });
    await h.service.moveRepair.stop();
  });

  it('TerminateInstances goes to the newer copy and says it is the user\'s; the repair then ends the old one', async () => {
    const h = await stoppedOnA();
    h.fake.nc(B).instances.push({ ...instance(I), ...stopped, ...movedFrom(A) } as NcInstance);
    await h.keeper.refreshHosts([B], 500);
    await h.ops.ccTerminateInstances({ instanceIds: [I] }, CTX);
    expect(h.fake.callsOf('terminate').map((c) => c.host)).toEqual([B]);
    expect(h.fake.nc(B).instances.find((i) => i.instanceId === I)).toMatchObject({ state: 'terminated', endedBy: 'user' });
    h.service.moveRepair.start();
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([]);
    await h.service.moveRepair.stop();
  });

  it('a copy on a fenced host is never touched; once its host is unfenced the repair goes on', async () => {
    const h = await stoppedOnA();
    h.fake.nc(B).instances.push({ ...instance(I), ...stopped, ...movedFrom(A) } as NcInstance);
    await h.keeper.refreshHosts([B], 500);
    await h.ops.ccSetFencedHosts({ hosts: [A] }, CTX);
    h.service.moveRepair.start();
    await h.service.moveRepair.idle();
    expect(h.fake.callsOf('terminate')).toEqual([]);
    await h.ops.ccSetFencedHosts({ hosts: [] }, CTX);
    await h.service.moveRepair.idle();
    await h.settle();
    expect(liveCopies(h)).toEqual([`stopped@${B}`]);
    await h.service.moveRepair.stop();
  });
});
