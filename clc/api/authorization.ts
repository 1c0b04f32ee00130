/**
 * What each caller may do. The admin-only actions change the cloud itself (services, placement of
 * everyone's instances); describes and one's own instances are open to any known identity. Every host-HA and
 * fencing action is admin-only.
 */
import { ClcErrors } from '../core/errors.js';
import type { Principal } from './auth.js';

export const ADMIN_ONLY: ReadonlySet<string> = new Set([
  'EnableService', 'DisableService', 'ModifyService', 'MigrateInstances', 'CancelMigration',
  // Quarantine (issue 18).
  'QuarantineNode', 'UnquarantineNode',
  // Pause (issue 18): freezing anyone's guest is an operator's act.
  'PauseInstances', 'UnpauseInstances',
  // Host HA (issue 6): every action, describes included (they show BMC settings and the fencing log).
  'ConfigureHAForHost', 'ConfigureHAForCluster', 'ConfigureHAForInstance', 'EnableHAForHost', 'DisableHAForHost', 'EnableHAForCluster', 'DisableHAForCluster',
  'ListHostHAConfigurations', 'DescribeHostHA', 'DescribeHAEvents', 'FenceHost', 'ConfirmHostFenced', 'SuspendHA', 'ResumeHA',
  'CompleteHostRemediation',
  // The event stream (issue 20): who changed what, and host HA's fencing log.
  'DescribeEvents',
]);

/** Throws UnauthorizedOperation when `principal` may not run `action`. */
export function authorize(action: string, principal: Principal): void {
  if (ADMIN_ONLY.has(action) && !principal.isAdmin) throw ClcErrors.make('UnauthorizedOperation', { action });
}
