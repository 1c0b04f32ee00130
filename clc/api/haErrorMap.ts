/**
 * Host HA's refusals (clc/ha/errors.ts) as the admin API answers them: each HA code stands for one
 * admin code, rebuilt from the same fields, so the admin sees the API's words and status whichever
 * layer refused. Total by type: a new HA code does not compile until it is mapped here.
 */
import type { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors, type ClcErrorCode } from '../core/errors.js';
import { HaErrors, type HaErrorCode } from '../ha/errors.js';

export const ADMIN_CODE_OF_HA: Readonly<Record<HaErrorCode, ClcErrorCode>> = Object.freeze({
  UnknownPartition: 'InvalidAvailabilityZone',
  UnknownHost: 'InvalidHost.NotFound',
  HostInOtherPartition: 'InvalidParameterCombination',
  MissingBmcSetting: 'MissingParameter',
  InvalidBmcSettings: 'InvalidParameterValue',
  AutoRepairNeedsPartition: 'InvalidParameterCombination',
  SettingsWouldNotHold: 'InvalidParameterCombination',
  SuspensionInPast: 'InvalidParameterValue',
  RemediationNeedsPartition: 'InvalidParameterCombination',
  InvalidRemediation: 'InvalidParameterCombination',
  RemediationNotInProgress: 'IncorrectHostHAState',
  StaleRemediationReport: 'RemediationIdMismatch',
  RemediationFailed: 'ServiceUnavailable',
  IllegalOperatorEvent: 'IncorrectHostHAState',
  HostUpAndHealthy: 'HostHealthy',
  FenceInProgress: 'HostFenceInProgress',
  EnableWhileFencing: 'OperationNotPermitted',
  FencedHostSilent: 'OperationNotPermitted',
  HostNotFenced: 'OperationNotPermitted',
  RestartsFailed: 'ServiceUnavailable',
  SourceTimedOut: 'ServiceUnavailable',
  SourceInconclusive: 'ServiceUnavailable',
  NoPowerManagement: 'ServiceUnavailable',
});

/** `e` in the admin registry when it is one of HA's; anything else unchanged. */
export function adminErrorFromHa(e: FerryError): FerryError {
  return HaErrors.has(e.code) ? ClcErrors.make(ADMIN_CODE_OF_HA[e.code], e.fields) : e;
}
