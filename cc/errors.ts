/**
 * The CC's error registry (STYLE habit 6): every refusal the CC serves has a code here, and every
 * failure of a call to an NC is translated into one of these codes at the node client's boundary
 * (nodeClient.ts). Parameter and transport problems keep their WireErrors codes.
 */
import { defineErrors, client, server } from '../shared/errors/registry.js';

export const CcErrors = defineErrors({
  NodeNotFound: client(404, 'node {host} is not registered in partition {partition}'),
  /** The NC could not be reached; maybeDelivered says whether the request may have arrived anyway. */
  NodeUnreachable: server(503, 'node {host} is unreachable: {detail}'),
  InstanceNotFound: client(404, 'instance {instanceId} is not known in partition {partition}'),
  /** Capacity may free up, so a retry can help. */
  InsufficientInstanceCapacity: {
    status: 409, clientFault: false, retryable: true,
    message: 'only {fit} of the minimum {minCount} {vmType} instances fit in partition {partition}; none were started',
  },
  /** An id that is already in use: the CLC allocates instance ids, so this is its mistake. */
  InstanceExists: client(409, 'instance {instanceId} already exists on node {host}'),
  // The codes below are an NC's refusals as the CC names them; ccRunInstances re-places around them.
  NodeDisabled: client(409, 'node {host} is disabled and takes no new instances'),
  /** Quarantine (issue 18), the NC's refusals under their own names: see nc/quarantine.ts. */
  NodeQuarantined: client(409, 'node {host} is quarantined since {since}: {detail}'),
  NodeNotQuarantined: client(409, 'node {host} is not quarantined: {detail}'),
  NodeFull: client(409, 'node {host} has no room: {detail}'),
  NodeUnhealthy: server(503, 'node {host} cannot use its hypervisor: {detail}'),
  /** The NC could not write its state (a full or read-only disk): it acknowledged nothing; the NC's own code and message. */
  StateWriteFailed: server(503, 'node {host} could not persist its state: {detail}'),
  // Volumes (issue 18): an NC's refusals under the NC's names, and the CC's own for a fenced host.
  VolumeConflict: client(409, '{detail}'),
  VolumeNotAttached: client(404, 'volume {volumeId} is not attached to instance {instanceId}'),
  /** Any other coded refusal from an NC, carried through with the NC's code and message. */
  /** An NC refused to start an instance it holds (terminated, never launched, domain gone): the NC's message. */
  InstanceNotStartable: client(409, 'instance {instanceId} cannot be started on node {host}: {detail}'),
  /** An NC refused to pause or resume an instance that does not run there (pending, ending, ended, domain not running): the NC's message. */
  InstanceNotPausable: client(409, 'instance {instanceId} on node {host} cannot be {action}: {detail}'),
  /** An NC refused to stop or reboot an instance in the wrong state (pending, ending, paused, stopped, domain not running): the NC's message. */
  InstanceStateConflict: client(409, 'instance {instanceId} on node {host} cannot be {action}: {detail}'),
  /** Host HA fences or has fenced the node: nothing is started there (ccStartInstances), attached to or detached from its instances. */
  NodeFenced: client(409, 'node {host} is fenced (or being fenced) by host HA: nothing is started or changed there until it is returned to service'),
  /** Issue 21: a command from a deposed CLC leader (clcEpochGuard.ts); the sender no longer leads. */
  StaleLeaderEpoch: client(409, '{operation} carries CLC epoch {epoch}, older than epoch {highest} a newer CLC leader sent to the CC of partition {partition}: the sender no longer leads, so nothing was done'),
  NodeFault: server(502, 'node {host} refused {operation}: {remoteCode}: {remoteMessage}', false),
  NodeProtocolError: server(502, 'node {host} answered {operation} outside the NC contract: {detail}'),

  // Live migration (ccMigrateInstances, ccDescribeMigrations, ccCancelMigration). Each refusal of a
  // request leaves everything as it was: no plan, no reservation.
  InvalidParameterCombination: client(400, '{detail}'),
  InstanceNotRunning: client(409, 'instance {instanceId} is {state}; only running instances can be migrated'),
  NothingToMigrate: client(409, 'node {host} runs no instance that could be migrated'),
  DestinationIsSource: client(400, 'destination {host} is the source of the migration'),
  /** Nodes may come back or be enabled, so a retry can help. */
  NoEligibleDestination: server(409, 'no destination is eligible for instances of node {source}: {detail}'),
  InsufficientCapacityForMigration: server(409, '{count} of {total} instances cannot be placed: {unplaced}; nothing was changed (partial migration places what fits)'),
  /** Also an NC's refusal of a source prepare: an instance is in another plan the CC had not seen yet. */
  MigrationInProgress: client(409, '{subject} is already being migrated by {migrationId}'),
  MigrationNotFound: client(404, 'migration {migrationId} is not known in partition {partition}'),
  MigrationAlreadyFinished: client(409, 'migration {migrationId} has already finished'),
  /** Issuing a per-migration credential failed; the step was not sent and is retried. */
  MigrationCredentialFailed: server(500, 'could not issue the {side} credential of {migrationId}/{instanceId}: {detail}', true),
  /** An NC's refusal of commit or replan: the item is not queued there (the coordinator re-reads and re-decides). */
  MigrationNotPrepared: client(409, 'node {host} holds no queued item {instanceId} of {migrationId}'),

  /**
   * Replicas (issue 21): this CC replica does not lead its partition now, so it changes nothing; reads
   * are served. `leaderIs` names the leader as `leader at <url>` (shared/leader/leaderRouting.ts), which
   * the CLC's and the NCs' routes follow. Also a change the leader's own NC calls would have carried
   * after its lease may have run out: nothing was sent.
   */
  NotLeader: server(503, 'CC replica {replica} of partition {partition} does not lead: {leaderIs}'),
  /**
   * Replicas (issue 21): the leader could not prove with etcd (one quorum read) that it still leads
   * before a change from the CLC, so it started nothing; etcd's lost quorum or a timeout, the store's
   * message in `detail`. A retry helps once etcd answers (or another replica leads).
   */
  LeadershipUnconfirmed: server(503, 'CC replica {replica} of partition {partition} could not confirm with etcd that it leads, so nothing was done: {detail}', true),
  /** An NC refused a command carrying an older CC leader epoch than one it has seen (the NC's StaleLeaderEpoch): this CC was deposed. */
  NodeSawNewerLeader: server(409, 'node {host} refused {operation}: {detail}', false),
});

export type CcErrorCode = keyof typeof CcErrors.table;
