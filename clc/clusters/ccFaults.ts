/**
 * Translates a failed CC call into the admin API's registry, at the adapter boundary (STYLE habit 6):
 * the CC's own codes arrive inside WireErrors.RemoteFault; transport failures arrive as
 * PeerUnreachable / PeerTimeout / PeerProtocolError.
 */
import { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors } from '../core/errors.js';

/** Connection errors that mean the request never reached the CC, so it cannot have acted. */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EADDRNOTAVAIL', 'EAI_AGAIN']);

function str(v: unknown): string {
  return v === undefined ? '' : String(v);
}

function fromRemote(e: FerryError, partition: string, op: string): FerryError {
  const remoteCode = str(e.fields.remoteCode);
  const remoteMessage = str(e.fields.remoteMessage);
  const answered = { partition, delivered: 'yes', remoteCode } as const;
  switch (remoteCode) {
    case 'NodeNotFound':
      return ClcErrors.withMessage('InvalidHost.NotFound', remoteMessage, answered);
    case 'InstanceNotFound':
      return ClcErrors.withMessage('InvalidInstanceID.NotFound', remoteMessage, answered);
    case 'InsufficientInstanceCapacity':
    case 'InsufficientCapacity':
      return ClcErrors.withMessage('InsufficientInstanceCapacity', remoteMessage, answered);
    // Live migration (issue 3): the CC's refusals of ccMigrateInstances / ccCancelMigration.
    case 'InstanceNotRunning':
      return ClcErrors.withMessage('IncorrectInstanceState', remoteMessage, answered);
    case 'InvalidParameterCombination':
    case 'DestinationIsSource':
      return ClcErrors.withMessage('InvalidParameterCombination', remoteMessage, answered);
    case 'NodeQuarantined':
    case 'NodeNotQuarantined':
    case 'NothingToMigrate':
    case 'NoEligibleDestination':
    case 'InsufficientCapacityForMigration':
    case 'MigrationInProgress':
    case 'MigrationAlreadyFinished':
      return ClcErrors.withMessage(remoteCode, remoteMessage, answered);
    // Volumes (issue 18): the NC's refusals, as the CC carries them.
    case 'VolumeConflict':
      return ClcErrors.withMessage('IncorrectState', remoteMessage, answered);
    case 'VolumeNotAttached':
      return ClcErrors.withMessage('InvalidAttachment.NotFound', remoteMessage, answered);
    case 'NodeFenced':
    // Pause (issue 18): the NC found the instance not running (it stopped since the CLC looked).
    case 'InstanceNotPausable':
    // Stop, start, reboot (issue 18): the NC found the instance in another state than the CLC saw.
    case 'InstanceStateConflict':
    case 'InstanceNotStartable':
      return ClcErrors.withMessage('IncorrectInstanceState', remoteMessage, answered);
    // Issue 21: the CC has seen a newer CLC leader's epoch; ccClusters.ts names the leader when it knows it.
    case 'StaleLeaderEpoch':
      return ClcErrors.make('NotLeader', { ...answered, replica: 'this CLC', leaderIs: `the cluster controller of partition ${partition} refused ${op}: ${remoteMessage}` });
    case 'MigrationNotFound':
      return ClcErrors.withMessage('InvalidMigrationID.NotFound', remoteMessage, answered);
    case 'StateWriteFailed':
      return ClcErrors.make('StateWriteFailed', { ...answered, detail: remoteMessage });
    // CC replicas (issue 21): no replica the route reached leads now (an election under way), or the
    // CC leader lost its lease mid-way (an NC refused its stale epoch). Part of a change may have been
    // done before, so 'maybe'; a retry reaches the new leader.
    case 'NotLeader':
    case 'NodeSawNewerLeader':
      return ClcErrors.make('ServiceUnavailable', { partition, delivered: 'maybe', remoteCode, detail: `${remoteCode} in partition ${partition}: ${remoteMessage}` });
    // The CC leader could not prove its leadership with etcd before the change: it started nothing.
    case 'LeadershipUnconfirmed':
      return ClcErrors.make('ServiceUnavailable', { partition, delivered: 'no', remoteCode, detail: `${remoteCode} in partition ${partition}: ${remoteMessage}` });
    case 'NodeUnreachable':
    case 'NodeUnhealthy':
    // A start that re-homes found no node it may use (its own disabled or full, the others refused).
    case 'NodeDisabled':
    case 'NodeFull':
      return ClcErrors.make('ServiceUnavailable', { ...answered, detail: `${remoteCode} in partition ${partition}: ${remoteMessage}` });
    default:
      // Anything else the CC refused is a request we should not have sent: our fault, not the admin's.
      return ClcErrors.make('InternalError', { ...answered, detail: `the cluster controller of partition ${partition} refused ${op}: ${remoteCode}: ${remoteMessage}` });
  }
}

/** Idempotent: an error already in the admin registry (a fake's, or one translated before) passes through. */
export function translateCcFailure(e: unknown, partition: string, op: string): FerryError {
  if (e instanceof FerryError && ClcErrors.has(e.code)) return e;
  if (e instanceof FerryError) {
    const detail = str(e.fields.detail);
    switch (e.code) {
      case 'RemoteFault':
        return fromRemote(e, partition, op);
      case 'PeerUnreachable':
        return ClcErrors.make('ServiceUnavailable', {
          partition, delivered: NOT_DELIVERED.has(detail) ? 'no' : 'maybe',
          detail: `the cluster controller of partition ${partition} is unreachable (${detail})`,
        });
      case 'PeerTimeout':
        return ClcErrors.make('ServiceUnavailable', {
          partition, delivered: 'maybe',
          detail: `the cluster controller of partition ${partition} did not answer ${op} within ${str(e.fields.timeoutMs)} ms`,
        });
      case 'PeerProtocolError':
        return ClcErrors.make('ServiceUnavailable', {
          partition, delivered: 'maybe',
          detail: `the cluster controller of partition ${partition} answered ${op} outside the contract (${detail})`,
        });
      default:
        break;
    }
  }
  return ClcErrors.make('InternalError', { partition, delivered: 'maybe', detail: `calling ${op} in partition ${partition}: ${(e as Error)?.message ?? String(e)}` });
}
