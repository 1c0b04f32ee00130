/**
 * The admin API's one error registry (STYLE habit 6): every failure the CLC answers with has an
 * EC2-style code here, with its message template, HTTP status and fault/retry flags. It lives in
 * the core, below the API, because the core operations (clc/core), the change gate and the CC
 * adapter (clc/clusters) raise these codes themselves; the API (clc/api) only renders them. Errors
 * from other surfaces (CC faults, the store, body parsing, host HA's clc/ha/errors.ts) are
 * translated into these at their boundary; docs/API.md lists every code
 * (test/clc/errorsDocumented.test.ts fails when one is missing).
 */
import { defineErrors, client, conflict, server } from '../../shared/errors/registry.js';

export const ClcErrors = defineErrors({
  // Request envelope and parameters.
  InvalidAction: client(400, 'The action {action} is not valid for this web service.'),
  MissingParameter: client(400, 'The request must contain the parameter {parameter}'),
  UnknownParameter: client(400, 'The parameter {parameter} is not recognized'),
  MalformedQueryString: client(400, 'The query string is malformed: {detail}'),
  InvalidParameterValue: client(400, 'Value ({value}) for parameter {parameter} is invalid. {detail}'),
  InvalidParameterCombination: client(400, '{detail}'),
  RequestEntityTooLarge: client(413, 'The request body exceeds {limit} bytes'),
  Unsupported: client(400, '{detail} is not supported'),
  /** A path the CLC does not serve (issue 14): an EC2-style document, never an HTML page. */
  UnknownEndpoint: client(404, 'No service is served at {path}; the admin API answers at {paths}'),
  /** EC2's answer to a request with DryRun=true that would have been allowed and was valid. */
  DryRunOperation: client(412, 'Request would have succeeded, but DryRun flag is set.'),
  /** A ClientToken reused with different parameters (EC2 idempotency). */
  IdempotentParameterMismatch: client(400, 'The client token {token} was already used with different parameters ({detail}); nothing was launched'),
  /** A NextToken that Ferry did not issue for this request, or that has expired. */
  InvalidPaginationToken: client(400, 'The specified pagination token is not valid or is expired: {detail}'),
  /** A request Ferry understands but does not carry out (ModifyService STOP of a node, say). */
  UnsupportedOperation: client(400, '{detail}'),
  // Authentication (SigV4, clc/api/sigv4Authenticator.ts) and authorization (clc/api/authorization.ts).
  /** Unsigned, or an unknown access key. */
  AuthFailure: client(401, 'AWS was not able to validate the provided access credentials: {detail}'),
  SignatureDoesNotMatch: client(403, 'The request signature we calculated does not match the signature you provided. Check your secret key and signing method.'),
  IncompleteSignature: client(400, 'The request signature does not conform to AWS Signature Version 4: {detail}'),
  /** Signed more than the allowed clock skew before (or after) the CLC's clock, or past X-Amz-Expires. */
  RequestExpired: client(400, 'Request has expired: {detail}'),
  // The status page's login (issue 20, clc/status/): a session cookie instead of SigV4, which a browser cannot sign.
  /** The access key id and secret key given to the status page's login are not the administrator's. */
  StatusLoginFailed: client(401, 'Login failed: the access key id and secret key are not the cloud administrator\'s'),
  /** A status page data request without a live session (none, logged out, or expired). */
  StatusSessionRequired: client(401, 'The status page needs a session: {detail}'),
  /** Too many failed status page logins from one source in a minute; only that source waits. */
  StatusLoginThrottled: { status: 429, message: 'Too many failed logins from {source}; try again in {seconds} s', clientFault: true, retryable: true },
  UnauthorizedOperation: client(403, 'You are not authorized to perform this operation: {action} needs the cloud administrator'),
  // Identifiers.
  'InvalidAMIID.Malformed': client(400, 'Invalid id: "{value}" (expecting "emi-" followed by 8 hex digits)'),
  'InvalidInstanceID.Malformed': client(400, 'Invalid id: "{value}" (expecting "i-" followed by 8 hex digits)'),
  /** EC2's words: "The instance ID 'i-…' does not exist" (IDs … do, for several); `instanceNotFound` builds it. */
  'InvalidInstanceID.NotFound': client(400, "The instance {idsDo} not exist"),
  /** EC2's DescribeInstanceTypes answer (and words) for names the VM type table does not have. */
  InvalidInstanceType: client(400, 'The following supplied instance types do not exist: [{types}]; this cloud has {known}'),
  /** CreateTags / DeleteTags naming no EC2 id, or another resource's: Ferry has only instances to tag. */
  InvalidID: client(400, "The ID '{value}' is not valid: {detail}"),
  InvalidAvailabilityZone: client(400, 'The availability zone (partition) {zone} does not exist; known: {known}'),
  'InvalidHost.NotFound': client(400, 'No node {host} is registered in {scope}'),
  InvalidServiceType: client(400, 'The service type {value} is not valid here; expected {expected}'),
  /** ModifyService / DescribeServices naming a service the cloud does not have. */
  'InvalidService.NotFound': client(400, 'No service named {name} is registered; DescribeServices lists them'),
  // Volumes (issue 18), EC2's codes and words.
  'InvalidVolumeID.Malformed': client(400, 'Invalid id: "{value}" (expecting "vol-" followed by 8 or 17 hex digits)'),
  'InvalidVolume.NotFound': client(400, "The volume {idsDo} not exist."),
  /** AttachVolume of a volume and an instance in different availability zones (partitions). */
  'InvalidVolume.ZoneMismatch': client(400, 'The volume {volumeId} is not in the same availability zone as instance {instanceId} ({volumeZone} vs {instanceZone})'),
  /** DetachVolume naming an instance or device the volume is not attached to (or as). */
  'InvalidAttachment.NotFound': client(400, 'Attachment point {detail} is not found'),
  'InvalidMigrationID.Malformed': client(400, 'Invalid id: "{value}" (expecting "mig-" followed by 8 hex digits)'),
  'InvalidMigrationID.NotFound': client(400, "The migration IDs '{ids}' do not exist"),
  /** DescribeEvents' AfterSeq past the newest event this CLC recorded (a cursor of another cloud, or of a store that was reset). */
  InvalidEventCursor: client(400, 'AfterSeq {after} is past the newest event ({last}); a cursor comes from this CLC\'s eventSeq or lastSeq'),
  // State conflicts (live migration, issue 3).
  IncorrectInstanceState: conflict('The instance {instanceId} is {state}; {detail}', false),
  /** A change to an instance in an unfinished migration; it can succeed once the migration ends. */
  OperationNotPermitted: conflict('{action} is not permitted on {detail}', true),
  NothingToMigrate: conflict('{detail}', false),
  MigrationInProgress: conflict('{detail}', true),
  MigrationAlreadyFinished: conflict('{detail}', false),
  /** A volume in a state the request needs another one for (EC2's IncorrectState: creating, deleting, not attached, mid-attach). */
  IncorrectState: conflict("Volume '{volumeId}' is in the '{state}' state: {detail}", true),
  /** AttachVolume or DeleteVolume of a volume that is attached (EC2's VolumeInUse). */
  VolumeInUse: conflict('{volumeId} is already attached to an instance ({instanceId}): {detail}', false),
  // Quarantine (issue 18).
  /**
   * The node is quarantined: QuarantineNode again, EnableService / ModifyService ENABLE, a drain of it
   * (MigrateInstances SourceHost; name its instances instead) and naming it as a destination are refused.
   */
  NodeQuarantined: conflict('Node {host} is quarantined since {since}: {detail}', false),
  /** UnquarantineNode of a node that is not quarantined. */
  NodeNotQuarantined: conflict('Node {host} is not quarantined: {detail}', false),
  // Host HA (issue 6).
  /** An operator's HA command the host's HA state does not allow (ConfirmHostFenced of a host not being fenced, FenceHost of a DISABLED one). */
  IncorrectHostHAState: conflict('Host {host} is {state}: {detail}', false),
  /** FenceHost of a host that is up and healthy (AVAILABLE, its NC answering) without Force=true (OpenStack's fencing blueprint). */
  HostHealthy: conflict('Host {host} is up and healthy (HA finds it AVAILABLE and its NC answers): FenceHost refuses to fence it unless Force=true is given', false),
  /** CompleteHostRemediation naming a remediation id that is not the host's current one (a stale report): nothing changed. */
  RemediationIdMismatch: conflict('Host {host}: {detail}', false),
  /** DisableHAForHost of a host being fenced: its power-off cannot be un-issued; possible once FENCED. */
  HostFenceInProgress: conflict('Host {host} is {state}: a power-off in flight cannot be un-issued, so HA stays on for it; wait for FENCED (or ConfirmHostFenced if its BMC is dead), then DisableHAForHost', true),
  /** CreateTags or a TagSpecification would leave an instance with more user tags than EC2 allows. */
  TagLimitExceeded: client(400, 'The maximum number of Tags for a resource has been reached: {detail}'),
  // Capacity and availability: temporary, so a retry can help.
  InsufficientInstanceCapacity: server(503, 'There is not enough capacity for {minCount} {vmType} instance(s) in {scope}: {detail}'),
  /** partial=false and not every instance fits (or partial and none does); nothing was reserved. */
  InsufficientCapacityForMigration: server(503, '{detail}'),
  /** No node may take the instances now (allowed ones unusable, every other one disabled or down). */
  NoEligibleDestination: conflict('{detail}', true),
  /**
   * A change waited for a DisableService or MigrateInstances of its partition beyond the gate's
   * bounds (clc/core/gate.ts); it was not run at all.
   */
  PartitionBusy: server(503, 'Partition {partition} is busy ({holder}); the request was not run: {detail}'),
  /**
   * A node could not write its state (nc.json: a full or read-only disk), so it acknowledged nothing;
   * the fix is on that node's disk. The NC's StateWriteFailed, under its own name at every tier.
   */
  StateWriteFailed: server(503, 'The change was not acknowledged: {detail}. Free space on (or repair) the disk of that node\'s state directory, then retry'),
  /**
   * A change sent to a CLC replica that does not lead (issue 21, --store etcd): nothing was done. The
   * leader's URL is in the message and in the X-Ferry-Leader header; reads are served by every replica.
   */
  NotLeader: server(503, 'This CLC replica ({replica}) is not the leader, so it changes nothing; {leaderIs}. Nothing was done'),
  /** A CC (or a node behind it) did not answer; `delivered` says whether the request may have arrived. */
  ServiceUnavailable: server(503, 'The service is unavailable: {detail}'),
  InternalError: server(500, 'An internal error occurred: {detail}'),
});

export type ClcErrorCode = keyof typeof ClcErrors.table;
