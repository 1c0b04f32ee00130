/**
 * Issue 20's event stream in a running cloud of real processes on 127.0.77.0/24: a drain (the
 * admin's DisableService, then MigrateInstances of the node) shows through DescribeEvents and
 * euca-describe-events as node.disabled → migration.planned → each item's changes →
 * migration.completed; a real HTTP receiver on 127.0.77.200 gets every event in seq order with the
 * bearer token; with the receiver down, and the CLC restarted meanwhile, everything arrives once it
 * is back (at least once: a seq may come twice, none is missing, none out of order).
 */
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudCli, TestCloud } from '../helpers/cloud.js';
import { adminCall, arr, describeMigration, placeOn, until } from '../helpers/cloudApi.js';

const HOOK = { host: '127.0.77.200', port: 18790 };
const TOKEN = 'events-test-token-7f3a';
const KEY_HEADER = `Bearer ${TOKEN}`;
const cloud = new TestCloud(77, 2, (base) => ({
  simArgs: ['--time-scale', '0.5', '--cores', '4', '--memory-mib', '2048', '--disk-gib', '100'],
  ccArgs: ['--poll-interval-ms', '1000'],
  clcArgs: [
    '--events-poll-ms', '300', '--events-webhook', `http://${HOOK.host}:${HOOK.port}/hook`, '--events-webhook-token-file', join(base, 'hook.token'),
  ],
}));
const [n1, n2] = cloud.nodeHosts as [string, string];

/** A webhook receiver: every batch it acknowledged, in arrival order, and the Authorization header it saw. */
class Receiver {
  readonly batches: { seqs: number[]; kinds: string[]; auth: string | undefined; dropped?: unknown }[] = [];
  private server: Server | undefined;

  async start(): Promise<void> {
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: { seq: number; kind: string }[]; dropped?: unknown };
        this.batches.push({ seqs: body.events.map((e) => e.seq), kinds: body.events.map((e) => e.kind), auth: req.headers.authorization, dropped: body.dropped });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(HOOK.port, HOOK.host, () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }

  seqs(): number[] {
    return this.batches.flatMap((b) => b.seqs);
  }
}

const receiver = new Receiver();

async function describeEvents(params: Record<string, string> = {}): Promise<{ list: any[]; lastSeq: number }> {
  const r = await adminCall(cloud, { Action: 'DescribeEvents', ...params });
  return { list: arr<any>(r.eventSet?.item), lastSeq: Number(r.lastSeq) };
}

/** Every seq from `from` to `to` arrived, and first arrivals came in increasing order (repeats allowed: at least once). */
function expectInOrderOnce(seqs: readonly number[], from: number, to: number): void {
  const firsts: number[] = [];
  const seen = new Set<number>();
  for (const s of seqs) {
    if (!seen.has(s)) firsts.push(s);
    seen.add(s);
  }
  const wanted = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  expect(firsts.filter((s) => s >= from && s <= to)).toEqual(wanted);
}

beforeAll(async () => {
  writeFileSync(join(cloud.baseDir, 'hook.token'), `${TOKEN}\n`, { mode: 0o600 });
  await receiver.start();
  await cloud.start();
}, 120_000);
afterAll(async () => {
  await receiver.stop();
  await cloud.destroy();
});

describe('the event stream of a running cloud', () => {
  it('a drain shows as node.disabled, migration.planned, each item, migration.completed: through the API, the CLI and the webhook', async () => {
    await placeOn(cloud, n1, 2);
    await adminCall(cloud, { Action: 'DisableService', Type: 'NODE', Host: n1 });
    const m = await adminCall(cloud, { Action: 'MigrateInstances', SourceHost: n1, 'DestinationHost.1': n2, AllowHosts: 'true' });
    const id = m.migrationId as string;
    const done = await until(`migration ${id} ends`, () => describeMigration(cloud, id), (v) => v?.state !== 'active', 120_000);
    expect(done.state).toBe('completed');

    // The watcher polls at 300 ms: the outcome is recorded soon after the CC reports it.
    const mine = await until('migration.completed recorded', () => describeEvents({ MigrationId: id }),
      (r) => r.list.some((e) => e.kind === 'migration.completed'), 30_000);
    const kinds = mine.list.map((e) => e.kind);
    expect(kinds[0]).toBe('migration.planned');
    expect(kinds.at(-1)).toBe('migration.completed');
    const items = mine.list.filter((e) => e.kind === 'migration.item');
    const to = (e: any) => arr<any>(e.detailSet?.item).find((d) => d.key === 'to')?.value;
    const instances = new Set(items.map((e) => e.instanceId));
    expect(instances.size).toBe(2);
    for (const i of instances) expect(items.filter((e) => e.instanceId === i).map(to).at(-1)).toBe('completed');

    // The node went into maintenance by the admin's key, before the plan.
    const disabled = (await describeEvents({ 'Kind.1': 'node.disabled', Host: n1 })).list;
    expect(disabled.length).toBeGreaterThanOrEqual(1);
    const planned = mine.list[0];
    expect(Number(disabled.at(-1).eventSeq)).toBeLessThan(Number(planned.eventSeq));
    expect(['system', 'ha', '', undefined]).not.toContain(disabled.at(-1).actor);
    expect(planned.actor).toBe(disabled.at(-1).actor);

    // The CLI prints the same events, oldest first.
    const cli = await cloudCli(cloud, 'euca-describe-events', '--migration', id);
    expect(cli.code, cli.stderr).toBe(0);
    const lines = cli.stdout.trim().split('\n');
    expect(lines.map((l) => l.split('\t')[3])).toEqual(kinds);
    expect(lines.every((l) => l.startsWith('EVENT\t') && l.includes(id))).toBe(true);
    const byKind = await cloudCli(cloud, 'euca-describe-events', '--kind', 'node.disabled', '--host', n1);
    expect(byKind.stdout.trim().split('\n').map((l) => l.split('\t')[3])).toEqual(disabled.map(() => 'node.disabled'));

    // The webhook got every event so far, in seq order, with the token.
    const { lastSeq } = await describeEvents();
    await until('the webhook has every event', async () => receiver.seqs(), (s) => s.includes(lastSeq), 30_000);
    expectInOrderOnce(receiver.seqs(), 1, lastSeq);
    expect(receiver.batches.every((b) => b.auth === KEY_HEADER)).toBe(true);
    expect(receiver.batches.flatMap((b) => b.kinds)).toEqual(expect.arrayContaining(['node.disabled', 'migration.planned', 'migration.item', 'migration.completed']));
  }, 240_000);

  it('with the receiver down and the CLC restarted meanwhile, every event arrives once it is back, in order', async () => {
    const before = (await describeEvents()).lastSeq;
    await until('the webhook caught up', async () => receiver.seqs(), (s) => s.includes(before), 30_000);
    await receiver.stop();
    const got = receiver.batches.length;

    await adminCall(cloud, { Action: 'EnableService', Type: 'NODE', Host: n1 });
    // The CLC tried and failed (it says so once in its log) before it is restarted.
    await until('a failed delivery is logged', async () => cloud.log('clc'), (log) => log.includes('event webhook: delivery failed'), 30_000);
    await cloud.restart('clc');
    await adminCall(cloud, { Action: 'DisableService', Type: 'NODE', Host: n2 });
    await adminCall(cloud, { Action: 'EnableService', Type: 'NODE', Host: n2 });
    const { lastSeq } = await describeEvents();
    const { list } = await describeEvents({ AfterSeq: String(before), 'Kind.1': 'node.enabled', 'Kind.2': 'node.disabled' });
    expect(list.map((e) => e.kind)).toEqual(['node.enabled', 'node.disabled', 'node.enabled']);
    expect(receiver.batches.length).toBe(got);

    await receiver.start();
    await until('the webhook has every event after its return', async () => receiver.seqs(), (s) => s.includes(lastSeq), 90_000);
    expectInOrderOnce(receiver.seqs(), 1, lastSeq);
    expect(receiver.batches.slice(got).flatMap((b) => b.kinds)).toEqual(expect.arrayContaining(['node.enabled', 'node.disabled']));
    // The restart kept the seqs: nothing numbered twice, nothing gone.
    expect((await describeEvents()).list.map((e) => Number(e.eventSeq))).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
  }, 240_000);
});
