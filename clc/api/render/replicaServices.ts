/**
 * Replicated services in DescribeServices (issue 21), after Eucalyptus 4's primary/secondary pairs: the
 * service keeps its name (`clc`, a partition's name) and is its leader: ENABLED, with the leader's host
 * and uri. Every other replica is listed beside it under a name of its own (replicaServiceName):
 * DISABLED while it answers as a standby (it serves reads, refuses changes with NotLeader), NOTREADY
 * when it does not answer. Without replicas nothing changes: one entry per service. Pure.
 */
import { CC_PATH } from '../../../shared/wire/transport.js';
import type { FerryError } from '../../../shared/errors/registry.js';
import type { ReplicaAnswer } from '../../clusters/clusters.js';
import type { Leadership } from '../../core/leadership.js';
import { CLC_SERVICE_NAME, CLC_SERVICE_PARTITION } from '../../core/services.js';
import type { ServiceStatus } from './serviceItems.js';

/** The host of a replica's URL (the URL itself if it is not one: it came from configuration or etcd as given). */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return url;
  }
}

function portOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80';
  } catch {
    return '';
  }
}

/**
 * A standby replica's service name: `<service>@<host>-<port>` (`cluster01@127.0.0.1-8784`). A full name
 * has no ':' or '/' in its parts, so the port is joined with '-' (and an IPv6 host's colons too).
 */
export function replicaServiceName(service: string, url: string): string {
  const port = portOf(url);
  return `${service}@${hostOf(url).replace(/:/g, '-')}${port === '' ? '' : `-${port}`}`;
}

const NO_LEADER = 'no replica leads now: an election is under way (retry in a few seconds)';

/** The epoch as a number for comparing two replicas that both say they lead (a handover's overlap): the newer term wins. */
function epochOf(epoch: string | undefined): bigint {
  return epoch === undefined ? -1n : BigInt(epoch);
}

/**
 * A partition's cluster services from its CC replicas' answers (ccDescribeReplica), in configured order.
 * `nodesFailure`: the partition's ccDescribeNodes failed (its services are NOTREADY, as with one CC).
 */
export function clusterReplicaStatuses(partition: string, answers: readonly ReplicaAnswer[], nodesFailure: FerryError | undefined): ServiceStatus[] {
  const reports = answers.flatMap((a) => ('report' in a ? [{ url: a.url, report: a.report }] : []));
  const leader = reports.filter((r) => r.report.leading)
    .reduce<(typeof reports)[number] | undefined>((best, r) => (best === undefined || epochOf(r.report.epoch) > epochOf(best.report.epoch) ? r : best), undefined);
  // No replica says it leads: the one they name (it does not answer), else the first configured.
  const named = reports.map((r) => r.report.leaderUrl).find((u) => u !== undefined && answers.some((a) => a.url === u));
  const mainUrl = leader?.url ?? named ?? answers[0]?.url;
  if (mainUrl === undefined) return [];
  const count = `${answers.length} CC replicas`;
  const mainDetails = leader !== undefined
    ? [`the leader of ${count}${leader.report.epoch !== undefined ? ` (epoch ${leader.report.epoch})` : ''}`]
    : [named !== undefined ? `the leader ${named} does not answer` : NO_LEADER.replace('no replica', 'no CC replica')];
  const statuses: ServiceStatus[] = [{
    type: 'cluster', partition, name: partition, host: hostOf(mainUrl), uri: `${mainUrl}${CC_PATH}`,
    state: leader !== undefined && nodesFailure === undefined ? 'ENABLED' : 'NOTREADY',
    details: [...mainDetails, ...(nodesFailure !== undefined ? [nodesFailure.message] : [])],
  }];
  for (const a of answers) {
    if (a.url === mainUrl) continue;
    const common = { type: 'cluster' as const, partition, name: replicaServiceName(partition, a.url), host: hostOf(a.url), uri: `${a.url}${CC_PATH}` };
    statuses.push('report' in a
      ? { ...common, state: 'DISABLED', details: [`a standby CC replica: serves reads, refuses changes (${leader !== undefined ? `the leader is ${leader.url}` : 'no leader now'})`] }
      : { ...common, state: 'NOTREADY', details: [`a CC replica that does not answer: ${a.failure.message}`] });
  }
  return statuses;
}

/**
 * The CLC's own services. A single CLC (no `replicas`) is one ENABLED `clc` at `origin`. Replicas on
 * etcd: `clc` is the leader as this replica observes it, and every other campaigning replica (alive:
 * its election key's lease holds) a DISABLED standby. `answering` says which other replicas answered
 * a probe just now (clc/replica/replicaProbe.ts): one that did not is NOTREADY, the leader included (a
 * leader killed with -9 keeps its key until its lease runs out). `path` is where the CLC serves its API.
 */
export function clcReplicaStatuses(origin: string, path: string, l: Leadership | undefined, answering?: ReadonlyMap<string, boolean>): ServiceStatus[] {
  const base = { type: 'eucalyptus' as const, partition: CLC_SERVICE_PARTITION };
  const replicas = l?.replicas?.();
  if (l === undefined || replicas === undefined) {
    return [{ ...base, name: CLC_SERVICE_NAME, host: hostOf(origin), uri: `${origin}${path}`, state: 'ENABLED', details: [] }];
  }
  const leader = l.leading() ? l.self : l.leaderUrl();
  const all = [...new Set([...replicas, l.self])];
  const mainUrl = leader ?? l.self;
  const silent = (url: string): boolean => url !== l.self && answering?.get(url) === false;
  const leaderSilent = leader !== undefined && silent(leader);
  const statuses: ServiceStatus[] = [{
    ...base, name: CLC_SERVICE_NAME, host: hostOf(mainUrl), uri: `${mainUrl}${path}`,
    state: leader !== undefined && !leaderSilent ? 'ENABLED' : 'NOTREADY',
    details: [leader === undefined ? NO_LEADER.replace('no replica', 'no CLC replica')
      : leaderSilent ? `the leader ${leader} does not answer (it keeps its election key until its lease runs out; then another replica is elected)`
        : `the leader of ${all.length} CLC replicas`],
  }];
  for (const url of all) {
    if (url === mainUrl) continue;
    const common = { ...base, name: replicaServiceName(CLC_SERVICE_NAME, url), host: hostOf(url), uri: `${url}${path}` };
    statuses.push(silent(url)
      ? { ...common, state: 'NOTREADY', details: ['a CLC replica that does not answer'] }
      : { ...common, state: 'DISABLED', details: [`a standby CLC replica: serves reads, refuses changes with NotLeader (${leader !== undefined ? `the leader is ${leader}` : 'no leader now'})`] });
  }
  return statuses;
}
