/** The dispatch table: every action the admin API serves, by its AWS `Action` name. */
import type { Action } from '../action.js';
import { cancelMigration } from './cancelMigration.js';
import { describeAvailabilityZones } from './describeAvailabilityZones.js';
import { describeEvents } from './describeEvents.js';
import { describeInstances } from './describeInstances.js';
import { describeInstanceTypes } from './describeInstanceTypes.js';
import { describeInstanceStatus } from './describeInstanceStatus.js';
import { describeMigrations } from './describeMigrations.js';
import { describeNodes } from './describeNodes.js';
import { describeRegions } from './describeRegions.js';
import { describeServices } from './describeServices.js';
import { describeTags } from './describeTags.js';
import { configureHAForCluster, configureHAForHost } from './haConfigure.js';
import { configureHAForInstance } from './haInstance.js';
import { describeHAEvents, describeHostHA, listHostHAConfigurations } from './haDescribe.js';
import { confirmHostFenced, fenceHost } from './haFence.js';
import { completeHostRemediation } from './haRemediation.js';
import { resumeHA, suspendHA } from './haSuspend.js';
import { disableHAForCluster, disableHAForHost, enableHAForCluster, enableHAForHost } from './haSwitch.js';
import { createTags, deleteTags } from './instanceTagging.js';
import { migrateInstances } from './migrateInstances.js';
import { disableService, enableService } from './modifyService.js';
import { modifyServiceByName } from './modifyServiceByName.js';
import { quarantineNode, unquarantineNode } from './quarantineNode.js';
import { pauseInstances, unpauseInstances } from './pauseInstances.js';
import { runInstances } from './runInstances.js';
import { rebootInstances, startInstances, stopInstances } from './stopStartInstances.js';
import { terminateInstances } from './terminateInstances.js';
import { attachVolumeAction, detachVolumeAction } from './volumeAttachments.js';
import { createVolumeAction, deleteVolumeAction, describeVolumes } from './volumes.js';

export const ACTIONS: Readonly<Record<string, Action>> = Object.freeze({
  RunInstances: runInstances,
  DescribeInstances: describeInstances,
  DescribeInstanceStatus: describeInstanceStatus,
  TerminateInstances: terminateInstances,
  // Stop, start, reboot (issue 18 part 5).
  StopInstances: stopInstances,
  StartInstances: startInstances,
  RebootInstances: rebootInstances,
  DescribeAvailabilityZones: describeAvailabilityZones,
  DescribeRegions: describeRegions,
  DescribeTags: describeTags,
  DescribeInstanceTypes: describeInstanceTypes,
  CreateTags: createTags,
  DeleteTags: deleteTags,
  DescribeServices: describeServices,
  DescribeNodes: describeNodes,
  EnableService: enableService,
  DisableService: disableService,
  ModifyService: modifyServiceByName,
  // Volumes (issue 18).
  CreateVolume: createVolumeAction,
  DeleteVolume: deleteVolumeAction,
  DescribeVolumes: describeVolumes,
  AttachVolume: attachVolumeAction,
  DetachVolume: detachVolumeAction,
  MigrateInstances: migrateInstances,
  DescribeMigrations: describeMigrations,
  CancelMigration: cancelMigration,
  // The event stream (issue 20).
  DescribeEvents: describeEvents,
  // Quarantine (issue 18).
  QuarantineNode: quarantineNode,
  UnquarantineNode: unquarantineNode,
  // Pause (issue 18): Ferry extensions.
  PauseInstances: pauseInstances,
  UnpauseInstances: unpauseInstances,
  // Host HA (issue 6).
  ConfigureHAForHost: configureHAForHost,
  ConfigureHAForCluster: configureHAForCluster,
  ConfigureHAForInstance: configureHAForInstance,
  EnableHAForHost: enableHAForHost,
  DisableHAForHost: disableHAForHost,
  EnableHAForCluster: enableHAForCluster,
  DisableHAForCluster: disableHAForCluster,
  ListHostHAConfigurations: listHostHAConfigurations,
  DescribeHostHA: describeHostHA,
  DescribeHAEvents: describeHAEvents,
  FenceHost: fenceHost,
  ConfirmHostFenced: confirmHostFenced,
  CompleteHostRemediation: completeHostRemediation,
  SuspendHA: suspendHA,
  ResumeHA: resumeHA,
});

/**
 * The actions that change nothing (issue 21): every CLC replica serves them from its store and the
 * CCs; every other action is a change, served only by the leader (a follower answers NotLeader).
 */
export const READ_ACTIONS: ReadonlySet<string> = new Set([
  'DescribeInstances', 'DescribeInstanceStatus', 'DescribeAvailabilityZones', 'DescribeRegions', 'DescribeTags', 'DescribeInstanceTypes',
  'DescribeServices', 'DescribeNodes', 'DescribeVolumes', 'DescribeMigrations', 'DescribeEvents', 'ListHostHAConfigurations',
  'DescribeHostHA', 'DescribeHAEvents',
]);

export function findAction(name: string): Action | undefined {
  return Object.prototype.hasOwnProperty.call(ACTIONS, name) ? ACTIONS[name] : undefined;
}
