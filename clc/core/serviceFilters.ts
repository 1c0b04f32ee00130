/**
 * DescribeServices filters under Eucalyptus 4's names, given a meaning for Ferry's three service
 * types. Values of one filter are OR-ed, filters are AND-ed; values match whole (Eucalyptus has no
 * wildcards here). A value a filter cannot take (a state that is no Eucalyptus state, a boolean that
 * is not true/false) is reported by `invalidValue` so the edge refuses it instead of matching nothing. Pure.
 */
import { filterNamesOf, type NamedFilter } from './instanceFilters.js';
import { EUCA_STATES, isEucaState, type ServiceState, type ServiceType } from './services.js';

/** What a filter looks at: a service as DescribeServices lists it. */
export interface FilterableService {
  readonly type: ServiceType;
  readonly partition: string;
  readonly host: string;
  readonly state: ServiceState;
}

interface FilterSpec {
  /** Why `value` can never be a value of this filter; undefined when it can. */
  readonly invalidValue?: (value: string) => string | undefined;
  readonly matches: (s: FilterableService, value: string) => boolean;
}

const booleanValue = (value: string): string | undefined =>
  (/^(true|false)$/i.test(value) ? undefined : 'expected true or false');

/** A boolean property of a service type, as the filter compares it. */
const byType = (holds: readonly ServiceType[]): FilterSpec => ({
  invalidValue: booleanValue,
  matches: (s, v) => String(holds.includes(s.type)) === v.toLowerCase(),
});

/**
 * Eucalyptus's meanings, for Ferry: the CLC (`eucalyptus`) serves both the EC2 API any identity
 * calls (Eucalyptus's public `compute`) and the service administration API (Eucalyptus's admin
 * `empyrean`); clusters and nodes are reached only by Ferry's own tiers, so they are internal.
 * Ferry has no service groups and publishes no service certificates.
 */
export const SERVICE_FILTERS = Object.freeze({
  partition: { matches: (s, v) => s.partition === v },
  host: { matches: (s, v) => s.host === v },
  'service-type': { matches: (s, v) => s.type === v.toLowerCase() },
  state: {
    invalidValue: (v) => (isEucaState(v.toUpperCase()) ? undefined : `expected a service state: ${EUCA_STATES.join(', ')}`),
    matches: (s, v) => s.state === v.toUpperCase(),
  },
  internal: byType(['cluster', 'node']),
  public: byType(['eucalyptus']),
  'user-service': byType(['eucalyptus']),
  'service-group': { matches: () => false },
  'service-group-member': byType([]),
  'certificate-usage': { matches: () => false },
} satisfies Record<string, FilterSpec>);

export type ServiceFilterName = keyof typeof SERVICE_FILTERS;
export const { names: SERVICE_FILTER_NAMES, isName: isServiceFilterName } = filterNamesOf(SERVICE_FILTERS);

export type ServiceFilter = NamedFilter<ServiceFilterName>;

/** Why `value` cannot be given to filter `name`, or undefined. */
export function invalidFilterValue(name: ServiceFilterName, value: string): string | undefined {
  const spec: FilterSpec = SERVICE_FILTERS[name];
  return spec.invalidValue?.(value);
}

/** A predicate true for the services every filter accepts. */
export function serviceFilterPredicate(filters: readonly ServiceFilter[]): (s: FilterableService) => boolean {
  return (s) => filters.every((f) => {
    const spec: FilterSpec = SERVICE_FILTERS[f.name];
    return f.values.some((v) => spec.matches(s, v));
  });
}
