/**
 * How the chaos test looks at a TestCloud from the outside: the simhv daemons' domains, each NC's
 * ncDescribeResource (asked as the CC would, over mutual TLS), and the admin API. Nothing here
 * throws because a daemon is down: a silent NC is `nc: undefined`, an unanswered admin call a reason.
 */
import { NC_OPS } from '../../shared/protocol/ncProtocol.js';
import { TypedClient } from '../../shared/protocol/typedClient.js';
import { NC_PATH } from '../../shared/wire/transport.js';
import type { AdminView, HostObservation } from './chaosInvariants.js';
import type { TestCloud } from './cloud.js';
import { arr, hypervisorDomains } from './cloudApi.js';

export class CloudObserver {
  private readonly nc: TypedClient<typeof NC_OPS>;

  constructor(private readonly cloud: TestCloud) {
    this.nc = new TypedClient(cloud.tierClient(NC_PATH, 'cc', cloud.controller), NC_OPS);
  }

  /**
   * Domains host by host in `order` (one after the other, so a re-read in the reverse order can
   * confirm a finding across a switchover), then every NC at once.
   */
  async hosts(order: readonly string[] = this.cloud.nodeHosts): Promise<HostObservation[]> {
    const domains = new Map<string, Awaited<ReturnType<typeof hypervisorDomains>>>();
    for (const host of order) domains.set(host, await hypervisorDomains(this.cloud, host));
    const ncs = await Promise.all(order.map((host) => this.nc.call(this.cloud.ncUrl(host), 'ncDescribeResource', {}, { timeoutMs: 5000 }).catch(() => undefined)));
    return order.map((host, k) => ({ host, domains: domains.get(host) ?? [], nc: ncs[k] }));
  }

  private async ask(params: Record<string, string>): Promise<{ answer?: any; why?: string }> {
    const r = await this.cloud.query(params).catch((e: unknown) => e as Error);
    if (r instanceof Error) return { why: `${params.Action}: ${r.message}` };
    if (r.status !== 200) return { why: `${params.Action} → ${r.status}` };
    const answer = r.doc[`${params.Action}Response`] as any;
    if (arr(answer?.unavailablePartitionSet?.item).length > 0) return { why: `${params.Action}: a partition is unavailable` };
    return { answer };
  }

  /** Why the cloud is not at a stable point (every daemon up, every node reachable, healthy, known), or undefined. */
  async unstable(): Promise<string | undefined> {
    const down = this.cloud.names().filter((n) => this.cloud.pid(n) === undefined);
    if (down.length > 0) return `not running: ${down.join(', ')}`;
    const { answer, why } = await this.ask({ Action: 'DescribeNodes' });
    if (!answer) return why;
    const nodes = arr<any>(answer.nodeSet?.item);
    const bad = this.cloud.nodeHosts.filter((h) => {
      const n = nodes.find((x) => x.host === h);
      return !n || n.reachable !== 'true' || n.healthy !== 'true' || n.nodeState === 'unknown';
    });
    return bad.length > 0 ? `nodes not reachable, healthy and known: ${bad.join(', ')}` : undefined;
  }

  /** The admin API's view at a stable point, or why it could not be had. */
  async admin(): Promise<AdminView | string> {
    const [nodes, instances, migrations, zones] = await Promise.all([
      this.ask({ Action: 'DescribeNodes' }), this.ask({ Action: 'DescribeInstances' }),
      this.ask({ Action: 'DescribeMigrations' }), this.ask({ Action: 'DescribeAvailabilityZones', 'ZoneName.1': 'verbose' }),
    ]);
    if (!nodes.answer || !instances.answer || !migrations.answer || !zones.answer) return [nodes.why, instances.why, migrations.why, zones.why].filter(Boolean).join('; ');
    const small = arr<any>(zones.answer.availabilityZoneInfo?.item).find((z) => /\bm1\.small\b/.test(String(z.zoneName)));
    return {
      nodes: arr<any>(nodes.answer.nodeSet?.item),
      instances: arr<any>(instances.answer.reservationSet?.item).flatMap((rv) => arr<any>(rv.instancesSet?.item)),
      migrations: arr<any>(migrations.answer.migrationSet?.item),
      smallFree: small ? Number.parseInt(String(small.zoneState), 10) : -1,
    };
  }
}

/** One line per host of what was observed: domains, node state, use, instances, incoming and unfinished plan items. */
export function describeObservation(hosts: readonly HostObservation[]): string {
  return hosts.map((h) => {
    const doms = h.domains.map((d) => `${d.id}:${d.state}`).join(' ') || '-';
    if (!h.nc) return `  ${h.host} hv[${doms}] nc DOWN`;
    const inst = h.nc.instances.map((i) => `${i.instanceId}:${i.state}/${i.migrationState}`).join(' ') || '-';
    const inc = (h.nc.incoming ?? []).map((r) => `${r.instanceId}<${r.migrationId}:${r.state}`).join(' ') || '-';
    const items = (h.nc.plans ?? []).flatMap((p) => p.items.map((i) => `${p.migrationId}/${i.instanceId}:${i.state}→${i.destination || '?'}`)).join(' ') || '-';
    return `  ${h.host} hv[${doms}] nc ${h.nc.nodeState} used ${h.nc.used.cores}c inst[${inst}] incoming[${inc}] plans[${items}]`;
  }).join('\n');
}
