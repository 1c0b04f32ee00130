/**
 * The NC's error registry (STYLE habit 6): every refusal the NC serves has a code here. Hypervisor
 * and store failures are translated into these codes at the NC's boundary (hypervisorLink.ts,
 * nodeController.ts); wire-level problems keep their WireErrors codes.
 */
import { defineErrors, client, server } from '../shared/errors/registry.js';

export const NcErrors = defineErrors({
  /** Maintenance mode: the node takes no new instances (Eucalyptus 3.3 "disabled"). */
  NodeDisabled: client(409, 'node {host} is disabled and takes no new instances'),
  /** Quarantine (issue 18): the node takes nothing and is not enabled until an administrator lifts it. */
  NodeQuarantined: client(409, 'node {host} is quarantined since {since}: {detail}'),
  /** Lifting a quarantine the node does not hold. */
  NodeNotQuarantined: client(409, 'node {host} is not quarantined: {detail}'),
  InsufficientCapacity: client(409, 'node {host} cannot fit {vmType}: needs {need}, free {free}'),
  InstanceNotFound: client(404, 'instance {instanceId} is not on node {host}'),
  /** Same instance id, different launch spec: a retry must repeat the original request exactly. */
  InstanceExists: client(409, 'instance {instanceId} already exists on node {host} with a different spec'),
  /** Only a running instance (record and domain) can be migrated. */
  InstanceNotRunning: client(409, 'instance {instanceId} on node {host} is {state}; only running instances can be migrated'),
  /** Start (ncStartInstance) of an instance that cannot be started here: terminated, not yet launched, or its domain gone. */
  InstanceNotStartable: client(409, 'instance {instanceId} on node {host} cannot be started: {detail}'),
  /** Pause or resume (ncPauseInstance) of an instance that is not running here: pending, ending, ended, or its domain not running. */
  InstanceNotPausable: client(409, 'instance {instanceId} on node {host} cannot be {action}: {detail}'),
  /** Stop or reboot (issue 18) of an instance in the wrong state: pending, ending, ended, paused, stopped (reboot), or its domain not running. */
  InstanceStateConflict: client(409, 'instance {instanceId} on node {host} cannot be {action}: {detail}'),
  /** Terminate waits until the instance's migration has ended or been rolled back. */
  InstanceMigrating: client(409, 'instance {instanceId} on node {host} is migrating ({migrationState}); terminate it once the migration has ended'),
  /** An instance is in a non-final item of another plan, or a drain of this node is still running. */
  MigrationInProgress: client(409, '{subject} is already being migrated by {migrationId}'),
  /** Commit of an item that is not queued here, replan of an item that is not queued, or an unknown plan. */
  MigrationNotPrepared: client(409, 'node {host} holds no queued item {instanceId} of {migrationId}: {detail}'),
  /** The plan or incoming record contradicts itself or this node (wrong source, duplicate items, ...). */
  MigrationPlanInvalid: client(400, 'migration {migrationId} is not valid on node {host}: {detail}'),
  /** A mutual-TLS node was asked to prepare or commit a migration without that item's credential. */
  MigrationCredentialMissing: client(400, 'node {host} needs a per-migration credential to {step} {instanceId} of {migrationId}'),
  /** Volumes (issue 18): the device or the volume is taken, or the volume is mid-change; nothing was changed. */
  VolumeConflict: client(409, 'instance {instanceId} on node {host}: {detail}'),
  /** A detach of a volume the instance's record does not hold. */
  VolumeNotAttached: client(404, 'volume {volumeId} is not attached to instance {instanceId} on node {host}'),
  /** A volume's storage cannot be reached from this node (a migration's prepare connects it; issue 18). */
  VolumeUnavailable: server(503, 'volume {volumeId} of instance {instanceId} cannot be connected on node {host}: {detail}'),
  HypervisorUnavailable: server(503, 'hypervisor of node {host} is unavailable: {detail}'),
  /** The hypervisor answered but refused the operation (not a connectivity problem). */
  HypervisorRefused: server(502, 'hypervisor of node {host} refused {operation}: {detail}', false),
  /** The NC could not persist a change; nothing was acknowledged. */
  StateWriteFailed: server(503, 'node {host} could not persist its state: {detail}'),
  /**
   * Replicas (issue 21, leaderEpoch.ts): the command carries an older CC leader's epoch than one this
   * node has seen; it comes from a deposed leader and changes nothing. Not retryable: that CC no longer leads.
   */
  StaleLeaderEpoch: server(409, 'node {host} refused {operation} of CC leader epoch {got}: it has seen epoch {seen}, so that CC no longer leads', false),
  /** The command's leaderEpoch field is not a decimal epoch; nothing was done. */
  InvalidLeaderEpoch: client(400, 'node {host} refused {operation}: leaderEpoch must be a decimal number'),
});

export type NcErrorCode = keyof typeof NcErrors.table;
