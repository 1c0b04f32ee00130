/**
 * Host HA's error registry (STYLE habit 6): the refusals HA raises itself, in HA's words. HA has no
 * wire surface of its own: where one of these reaches the admin API (an operator's HA command, or
 * EnableService asking HA first), clc/api/haErrorMap.ts turns it into the admin code it stands for,
 * with the same fields; each entry names the fields that code's message needs (a test checks).
 * Fence agents' failures have their own registry (power/errors.ts).
 */
import { defineErrors, client, conflict, server } from '../../shared/errors/registry.js';

export const HaErrors = defineErrors({
  // What an operator asked of HA names something HA does not know, or settings that do not hold.
  UnknownPartition: client(400, 'Host HA knows no partition {zone}; known: {known}'),
  /** `scope` says where HA looked (and how to add the host). */
  UnknownHost: client(400, 'No node {host} is registered in {scope}'),
  /** ConfigureHAForHost naming another partition than the one HA knows the host in. */
  HostInOtherPartition: client(400, 'Host HA: {detail}'),
  MissingBmcSetting: client(400, 'The BMC settings lack {parameter}'),
  /** Fence-agent settings a fence agent could not be run with ({parameter} names the ones that may be at fault). */
  InvalidBmcSettings: client(400, 'The BMC settings ({parameter}, given as {value}) are invalid: {detail}'),
  AutoRepairNeedsPartition: client(400, 'Host HA: {detail}'),
  /** A ConfigureHAForCluster after which a layer of settings would no longer compile. */
  SettingsWouldNotHold: client(400, 'Host HA: {detail}'),
  SuspensionInPast: client(400, 'The suspension end {value} ({parameter}) {detail}'),
  /** A remediation strategy, command, webhook or secret given without Partition (they are set per cluster). */
  RemediationNeedsPartition: client(400, 'Host HA: {detail}'),
  /** Remediation settings that do not fit together (external without a command or webhook, both, a command or webhook with fence). */
  InvalidRemediation: client(400, 'Host HA: {detail}'),
  // The host's state refuses the command.
  /** FenceHost / ConfirmHostFenced in a state whose transition table has no such event. */
  IllegalOperatorEvent: conflict('Host {host} is {state}: {detail}', false),
  /** FenceHost of a host that is up and healthy, without Force (OpenStack's fencing blueprint). */
  HostUpAndHealthy: conflict('Host {host} is up and healthy (HA finds it AVAILABLE and its NC answers): FenceHost refuses to fence it unless Force=true is given', false),
  /** CompleteHostRemediation of a host with no external remediation in flight. */
  RemediationNotInProgress: conflict('Host {host} is {state}: {detail}', false),
  /** CompleteHostRemediation naming another remediation than the one in flight (a stale report): nothing changes. */
  StaleRemediationReport: conflict('Host {host}: {detail}', false),
  /** DisableHAForHost while the power-off is in flight: it cannot be un-issued. */
  FenceInProgress: conflict('Host {host} is {state}: its power-off cannot be un-issued', true),
  /** EnableService of a host HA is fencing ({action} is the refused request). */
  EnableWhileFencing: conflict('{action} refused: {detail}', true),
  /** EnableService of a fenced host whose NC does not answer, so its obsolete copies cannot be destroyed. */
  FencedHostSilent: conflict('{action} refused: {detail}', true),
  /** A restart elsewhere of a host HA does not hold FENCED (fence before evacuate). */
  HostNotFenced: conflict('{action} refused: {detail}', false),
  /** A source HA asked (the CC, for health or activity) did not answer before the effect's deadline; the sample is inconclusive. */
  SourceTimedOut: server(504, '{detail}'),
  /** A source HA asked answered, but not in a way a verdict may rest on (a standby CC replica's word that a host is down, issue 21). */
  SourceInconclusive: server(503, '{detail}'),
  /** A power action for a host without a BMC configured (HA keeps such a host INELIGIBLE; a race with DisableHAForHost). */
  NoPowerManagement: server(503, 'no power management is configured for {host}: {detail}'),
  /** The external remediator refused or failed (a command's exit, a webhook's 4xx, never accepted in time): HA escalates. */
  RemediationFailed: server(502, '{detail}'),
  /** Some instances of a fenced host could not be restarted elsewhere; the attempt is retried. */
  RestartsFailed: server(503, 'could not restart {detail}'),
});

export type HaErrorCode = keyof typeof HaErrors.table;
