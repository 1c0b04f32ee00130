/**
 * What each caller may do. The admin-only actions change the cloud itself (services, placement of
 * everyone's instances); describes and one's own instances are open to any known identity. HA and
 * fencing actions join ADMIN_ONLY as they land.
 */
import type { Principal } from './auth.js';
import { ClcErrors } from './errors.js';

export const ADMIN_ONLY: ReadonlySet<string> = new Set(['EnableService', 'DisableService', 'MigrateInstances', 'CancelMigration']);

/** Throws UnauthorizedOperation when `principal` may not run `action`. */
export function authorize(action: string, principal: Principal): void {
  if (ADMIN_ONLY.has(action) && !principal.isAdmin) throw ClcErrors.make('UnauthorizedOperation', { action });
}
