/**
 * The commands an administrator runs with euca2ools 3.x and the Eucalyptus 4 admin tools, built as
 * those tools build them (their argparse arguments routed into params, then requestbuilder.ts) and
 * read as they read them (LIST_TAGS, then their print_result / main logic). Rows are the cells
 * each command hands its table or tabify(), before layout. Sources, by repository, commit, path:line:
 *   EU = eucalyptus/euca2ools 6b3f62f (/work/.mirror/eucalyptus+euca2ools)
 *   EA = eucalyptus/eucalyptus 95e0cef, under admin-tools/ (/work/.mirror/eucalyptus+eucalyptus)
 *   RB = boto/requestbuilder b4ff332
 *
 * Services:
 * - euca2ools EC2: NAME 'ec2', API_VERSION '2015-10-01', POST, HmacV4Auth, URL from EC2_URL
 *   (EU euca2ools/commands/ec2/__init__.py:50-54, 72-73).
 * - admin tools EC2 (euserv-migrate-instances, euserv-describe-node-controllers' second call):
 *   NAME 'ec2', API_VERSION '2014-10-01', POST (EA eucalyptus_admin/commands/ec2/__init__.py:39-60).
 * - admin tools Bootstrap (Empyrean): NAME 'bootstrap', API_VERSION 'eucalyptus', POST, URL from
 *   EUCA_BOOTSTRAP_URL (EA eucalyptus_admin/commands/bootstrap/__init__.py:39-60).
 * - The shipped config (EA conf/conf.d/localhost.ini:1-10): region `localhost`, ec2-url
 *   http://127.0.0.1:8773/services/compute/, empyrean-url http://127.0.0.1:8773/services/Empyrean/
 *   (trailing slashes, sent as they are).
 *
 * Parameters: every argparse option of a command lands in self.args with its default, and every
 * one routed to PARAMS (the default route, RB util.py:18, command.py:225, 245-260) is flattened:
 * None and [] vanish, but a store_true option not given is False and is sent as `false` (RB
 * request.py:341). So euserv-describe-services always sends ListAll, ShowEvents and ShowEventStacks
 * (EA describeservices.py:49-57); options with route_to=None (--expert, --group-by-*,
 * --include-dest, -n, -g...) are never sent. `--filter N=V` options become Filter.N.Name /
 * Filter.N.Value.M, grouped by name (RB request.py:247-253, 430-444). A command run from another
 * (euserv-describe-node-controllers) passes only its keyword arguments, so only those are sent
 * (RB command.py distribute_args; EA describenodecontrollers.py:50, 62-63).
 */
import type { ToolDict, ToolValue } from './listDelimitedXml.js';
import { get, list, text } from './listDelimitedXml.js';
import { EMPTY, type ParamInput, type RequestbuilderSession, type ToolResponse, type ToolService } from './requestbuilder.js';

export const EUCA2OOLS_USER_AGENT = 'euca2ools/3.4.1 (CPython 2.7.5; Linux 3.10.0-862.el7.x86_64; x86_64) requestbuilder/0.7.1 requests/2.6.0';
export const EUCALYPTUS_ADMIN_USER_AGENT = 'eucalyptus-admin/4.4.5 (CPython 2.7.5; Linux 3.10.0-862.el7.x86_64; x86_64) requestbuilder/0.7.1 requests/2.6.0';

export const euca2oolsEc2 = (endpoint: string, region?: string): ToolService => ({ name: 'ec2', apiVersion: '2015-10-01', endpoint, ...(region ? { region } : {}) });
export const adminEc2 = (endpoint: string, region?: string): ToolService => ({ name: 'ec2', apiVersion: '2014-10-01', endpoint, ...(region ? { region } : {}) });
export const adminBootstrap = (endpoint: string, region?: string): ToolService => ({ name: 'bootstrap', apiVersion: 'eucalyptus', endpoint, ...(region ? { region } : {}) });

/** `--filter NAME=VALUE` options in the order given, grouped as _process_filters does. */
export type CliFilters = readonly (readonly [string, string])[];
function processFilters(filters: CliFilters): { Name: string; Value: string[] }[] {
  const byName = new Map<string, string[]>();
  for (const [name, value] of filters) byName.set(name, [...(byName.get(name) ?? []), value]);
  return [...byName].map(([Name, Value]) => ({ Name, Value }));
}

/** _filter_row_values: a value Python finds false prints as ''. */
function cell(v: ToolValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v === undefined || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v).length === 0)) return '';
  return JSON.stringify(v);
}

/** `x.lower()` on what must be a string; anything else is the AttributeError the tool would die of. */
function lower(v: ToolValue | undefined, what: string): string {
  if (typeof v !== 'string') throw new TypeError(`${what} is ${JSON.stringify(v)}, not a string: the tool would fail calling .lower() on it`);
  return v.toLowerCase();
}

const LIST_INSTANCES = ['reservationSet', 'instancesSet', 'groupSet', 'tagSet', 'blockDeviceMapping', 'productCodes', 'networkInterfaceSet', 'privateIpAddressesSet'];

/** euca2ools 3.x EC2 commands (EU euca2ools/commands/ec2/). */
export class Euca2ools {
  constructor(readonly session: RequestbuilderSession, readonly ec2: ToolService) {}

  /** euca-describe-instances [INSTANCE ...] [--filter N=V ...] (describeinstances.py:32, 184); `verbose` is an INSTANCE. */
  describeInstances(instanceIds: readonly string[] = [], filters: CliFilters = []): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'DescribeInstances', { InstanceId: instanceIds, Filter: processFilters(filters) }, LIST_INSTANCES);
  }

  /** euca-describe-regions [REGION ...] (describeregions.py:32-36). */
  describeRegions(regionNames: readonly string[] = []): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'DescribeRegions', { RegionName: regionNames, Filter: [] }, ['regionInfo']);
  }

  /** euca-describe-availability-zones [ZONE ...] (describeavailabilityzones.py:32-40); `verbose` is a ZONE. */
  describeAvailabilityZones(zoneNames: readonly string[] = []): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'DescribeAvailabilityZones', { ZoneName: zoneNames, Filter: [] }, ['availabilityZoneInfo', 'messageSet']);
  }

  /**
   * euca-run-instances IMAGE [-n MIN[-MAX]] [-t TYPE] [-z ZONE] [--client-token T] (runinstances.py:39-147,
   * preprocess :179-200): -n is split into MinCount/MaxCount integers; options not given are None.
   */
  runInstances(o: { imageId: string; count?: string; instanceType?: string; zone?: string; clientToken?: string }): Promise<ToolResponse> {
    const [min, max = min] = (o.count ?? '1').split('-').map((n) => Number.parseInt(n, 10)) as [number, number?];
    // Every other option defaults to None or [] and is not sent; MinCount > MaxCount is swapped (:196-199).
    const params: Record<string, ParamInput> = {
      ImageId: o.imageId, InstanceType: o.instanceType, 'Placement.AvailabilityZone': o.zone, ClientToken: o.clientToken,
      MinCount: Math.min(min, max), MaxCount: Math.max(min, max),
    };
    return this.session.send(this.ec2, 'RunInstances', params, LIST_INSTANCES);
  }

  /** euca-terminate-instances INSTANCE ... (terminateinstances.py:32-34). */
  terminateInstances(instanceIds: readonly string[]): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'TerminateInstances', { InstanceId: instanceIds }, ['instancesSet']);
  }

  /**
   * euca-create-tags RESOURCE ... --tag KEY[=VALUE] ... (createtags.py:30-39): ResourceId.N and Tag.N,
   * each --tag read by binary_tag_def.
   */
  createTags(resourceIds: readonly string[], tags: readonly string[]): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'CreateTags', { ResourceId: resourceIds, Tag: tags.map(binaryTagDef) });
  }

  /**
   * euca-delete-tags RESOURCE ... --tag KEY[=[VALUE]] ... (deletetags.py:30-44): as create, each --tag
   * read by ternary_tag_def, so `KEY` alone sends no Value (whatever the value) and `KEY=` an empty one.
   */
  deleteTags(resourceIds: readonly string[], tags: readonly string[]): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'DeleteTags', { ResourceId: resourceIds, Tag: tags.map(ternaryTagDef) });
  }

  /** euca-describe-tags [--filter N=V ...] (describetags.py:31-37). */
  describeTags(filters: CliFilters = []): Promise<ToolResponse> {
    return this.session.send(this.ec2, 'DescribeTags', { Filter: processFilters(filters) }, ['tagSet']);
  }
}

/** print_reservation / print_instance's first cells and the TAG rows (EU commands/ec2/__init__.py:78-146). */
export function instanceRows(result: ToolDict): string[][] {
  const rows: string[][] = [];
  for (const rv of list(result.reservationSet)) {
    rows.push(['RESERVATION', cell(get(rv, 'reservationId')), cell(get(rv, 'ownerId'))]);
    for (const i of list(get(rv, 'instancesSet'))) {
      rows.push(['INSTANCE', cell(get(i, 'instanceId')), cell(get(i, 'imageId')), cell(get(get(i, 'instanceState'), 'name')), cell(get(i, 'instanceType')), cell(get(get(i, 'placement'), 'availabilityZone'))]);
      for (const tag of list(get(i, 'tagSet'))) rows.push(['TAG', 'instance', cell(get(i, 'instanceId')), cell(get(tag, 'key')), cell(get(tag, 'value'))]);
    }
  }
  return rows;
}

/**
 * binary_tag_def (EU euca2ools/commands/argtypes.py:249-266): `KEY=VALUE`; `KEY=` and `KEY` give
 * Value EMPTY (sent empty). An empty argument or one without a key is argparse's error: the tool
 * stops before sending anything.
 */
export function binaryTagDef(arg: string): { Key: string; Value: string | typeof EMPTY } {
  if (arg === '') throw new Error('argument --tag: tag must be non-empty');
  const eq = arg.indexOf('=');
  if (eq < 0) return { Key: arg, Value: EMPTY };
  if (eq === 0) throw new Error(`argument --tag: tag "${arg}" must include a key`);
  return { Key: arg.slice(0, eq), Value: arg.slice(eq + 1) || EMPTY };
}

/** ternary_tag_def (argtypes.py:269-281): `KEY=VALUE`; `KEY=` gives Value EMPTY; `KEY` alone no Value at all. */
export function ternaryTagDef(arg: string): { Key: string; Value?: string | typeof EMPTY } {
  const eq = arg.indexOf('=');
  if (eq < 0) return { Key: arg };
  return { Key: arg.slice(0, eq), Value: arg.slice(eq + 1) || EMPTY };
}

/** RESOURCE_TYPE_MAP.lookup (EU commands/ec2/__init__.py:516-551), for the prefixes these tests name. */
const RESOURCE_TYPES = new Map([['i', 'instance'], ['emi', 'image'], ['vol', 'volume'], ['sg', 'security-group']]);

/**
 * euca-create-tags' print_result (createtags.py:41-45): it prints what it was asked, not the answer:
 * a TAG row (print_resource_tag, __init__.py:78-81) per resource and tag, EMPTY printing as ''.
 */
export function createdTagRows(resourceIds: readonly string[], tags: readonly string[]): string[][] {
  return resourceIds.flatMap((id) => tags.map(binaryTagDef).map((t) => [
    'TAG', RESOURCE_TYPES.get(id.slice(0, id.indexOf('-'))) ?? '', id, t.Key, t.Value === EMPTY ? '' : t.Value,
  ]));
}

const SERVICE_FILTERS = new Map([
  ['availability-zone', 'partition'], ['host', 'host'], ['internal', 'internal'], ['public', 'public'],
  ['service-group', 'service-group'], ['service-group-member', 'service-group-member'], ['service-type', 'service-type'], ['state', 'state'],
]);
const LIST_SERVICES = ['serviceAccounts', 'serviceStatuses', 'statusDetails', 'uris'];

export interface NodeController {
  readonly zone: string;
  readonly host: string;
  readonly state: string;
  readonly details: string;
  /** instance id → its MIGRATING-TO destination, or '' */
  readonly instances: Map<string, string>;
}

/** Eucalyptus 4 admin tools (EA eucalyptus_admin/commands/). */
export class EucalyptusAdmin {
  constructor(readonly session: RequestbuilderSession, readonly bootstrap: ToolService, readonly ec2: ToolService) {}

  /**
   * euserv-describe-services [SVCINSTANCE ...] [-a] [--filter N=V ...] (bootstrap/describeservices.py:47-86).
   * availability-zone is sent as `partition` (_RenamingFilter, :67); an unknown filter name is the tool's own argparse error.
   */
  describeServices(o: { names?: readonly string[]; all?: boolean; filters?: CliFilters } = {}): Promise<ToolResponse> {
    const filters = (o.filters ?? []).map(([name, value]) => {
      const serverName = SERVICE_FILTERS.get(name);
      if (serverName === undefined) throw new Error(`argument --filter: "${name}=${value}" matches no available filters`);
      return [serverName, value] as const;
    });
    return this.session.send(this.bootstrap, 'DescribeServices', {
      ServiceName: o.names ?? [], ListAll: o.all === true, ShowEvents: false, ShowEventStacks: false, Filter: processFilters(filters),
    }, LIST_SERVICES);
  }

  /** euserv-modify-service -s STATE SVCINSTANCE (bootstrap/modifyservice.py:35-38). */
  modifyService(name: string, state: string): Promise<ToolResponse> {
    return this.session.send(this.bootstrap, 'ModifyService', { Name: name, State: state });
  }

  /**
   * euserv-describe-node-controllers (bootstrap/describenodecontrollers.py:49-91): DescribeServices
   * with only ListAll=true, then DescribeInstances with only InstanceId.1=verbose on the EC2 URL;
   * each node service (type `node`) with the instances whose `euca:node` tag names it, and
   * `euca:node:migration:destination` as MIGRATING-TO.
   */
  async describeNodeControllers(): Promise<{ nodes: Map<string, NodeController>; rows: string[][] }> {
    const services = list((await this.session.send(this.bootstrap, 'DescribeServices', { ListAll: true }, LIST_SERVICES)).result.serviceStatuses);
    const nodes = new Map<string, NodeController>();
    for (const service of services) {
      const svcid = get(service, 'serviceId');
      if (svcid === undefined) throw new TypeError("a service status without serviceId: the tool would fail on service['serviceId']");
      if (text(get(svcid, 'type')) !== 'node') continue;
      const detailsValue = get(service, 'details');
      if (typeof detailsValue === 'string' && detailsValue !== '') throw new TypeError(`details is the string ${JSON.stringify(detailsValue)}: the tool would fail calling .iteritems() on it`);
      const details = Object.entries(detailsValue !== undefined && typeof detailsValue === 'object' && !Array.isArray(detailsValue) ? detailsValue : {})
        .map(([k, v]) => `${k}=${cell(v)}`).join(', ');
      nodes.set(cell(get(svcid, 'name')), {
        zone: cell(get(svcid, 'partition')), host: cell(get(svcid, 'host')), state: lower(get(service, 'localState'), 'localState'), details, instances: new Map(),
      });
    }
    const reservations = (await this.session.send(this.ec2, 'DescribeInstances', { InstanceId: ['verbose'] }, LIST_INSTANCES)).result.reservationSet;
    if (!Array.isArray(reservations)) throw new TypeError('no reservationSet: the tool would fail iterating None');
    for (const rv of reservations) {
      for (const instance of list(get(rv, 'instancesSet'))) {
        let node: NodeController | undefined;
        let dest = '';
        for (const tag of list(get(instance, 'tagSet'))) {
          const key = get(tag, 'key');
          const value = cell(get(tag, 'value'));
          if (key === undefined) throw new TypeError("a tag without key: the tool would fail on tag['key']");
          if (key === 'euca:node' && nodes.has(value)) node = nodes.get(value);
          else if (key === 'euca:node:migration:destination') dest = value;
        }
        node?.instances.set(cell(get(instance, 'instanceId')), dest);
      }
    }
    const rows: string[][] = [];
    for (const [, n] of [...nodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      rows.push(['NODE', n.zone, n.host, n.state, n.details]);
      for (const [id, dest] of n.instances) rows.push(dest === '' ? ['INSTANCE', id, '', ''] : ['INSTANCE', id, 'MIGRATING-TO', dest]);
    }
    return { nodes, rows };
  }

  /**
   * euserv-migrate-instances (-s HOST | -i INSTANCE) [--include-dest HOST ... | --exclude-dest HOST ...]
   * (ec2/migrateinstances.py:33-56): AllowHosts=true|false with DestinationHost.N.
   */
  migrateInstances(o: { source?: string; instance?: string; includeDest?: readonly string[]; excludeDest?: readonly string[] }): Promise<ToolResponse> {
    const params: Record<string, ParamInput> = { SourceHost: o.source, InstanceId: o.instance };
    if (o.includeDest?.length) Object.assign(params, { AllowHosts: true, DestinationHost: o.includeDest });
    else if (o.excludeDest?.length) Object.assign(params, { AllowHosts: false, DestinationHost: o.excludeDest });
    return this.session.send(this.ec2, 'MigrateInstances', params);
  }
}

/** euserv-describe-services' default table (group by type, :152-163): SERVICE type zone name state. */
export function serviceRows(result: ToolDict): string[][] {
  const byType = new Map<string, ToolValue[]>();
  for (const s of list(result.serviceStatuses)) {
    const type = cell(get(get(s, 'serviceId'), 'type'));
    byType.set(type, [...(byType.get(type) ?? []), s]);
  }
  return [...byType].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([type, list_]) => list_.map((s) => {
    const id = get(s, 'serviceId');
    return ['SERVICE', type, cell(get(id, 'partition')), cell(get(id, 'name')), lower(get(s, 'localState'), 'localState')];
  }));
}

/** euserv-describe-services --expert (:90-106): SERVICE fullName state epoch uri accounts, sorted by fullName. */
export function expertServiceRows(result: ToolDict): string[][] {
  return list(result.serviceStatuses).map((s) => {
    const id = get(s, 'serviceId');
    const accounts = list(get(s, 'serviceAccounts'))
      .map((a) => `${cell(get(a, 'accountName'))}=${cell(get(a, 'accountNumber'))}:${cell(get(a, 'accountCanonicalId'))}`).sort();
    return ['SERVICE', cell(get(id, 'fullName')), lower(get(s, 'localState'), 'localState'), cell(get(s, 'localEpoch')), cell(get(id, 'uri')), accounts.join(',')];
  }).sort((a, b) => ((a[1] ?? '') < (b[1] ?? '') ? -1 : (a[1] ?? '') > (b[1] ?? '') ? 1 : 0));
}
