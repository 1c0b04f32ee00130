/**
 * Validates an action's parameter tree once, with zod, into a frozen typed object (STYLE habit 7),
 * and turns the first zod issue into one EC2-coded error naming the AWS parameter. Shared field
 * schemas live here so every action reads ids, counts and lists the same way.
 */
import { z } from 'zod';
import type { FerryError } from '../../shared/errors/registry.js';
import { ClcErrors, type ClcErrorCode } from '../core/errors.js';
import { showKey } from '../core/showKey.js';
import { awsParamName, valueAt, type ParamMap } from './queryParams.js';

/** Marks a zod issue with the registry code it should become (zod carries it in `params`). */
export function coded(code: ClcErrorCode, message: string, fields: Readonly<Record<string, string>> = {}): { message: string; params: CodedParams } {
  return { message, params: { code, fields } };
}

interface CodedParams { readonly code: ClcErrorCode; readonly fields: Readonly<Record<string, string>> }

const LIST_MISSING = 'ferry:list-missing';

/** A numbered list `Name.1 ... Name.n`; a missing one is reported as `Name.1`. */
export function paramList<T extends z.ZodType>(item: T) {
  return z.array(item, { error: (iss) => (iss.input === undefined ? LIST_MISSING : 'expected a numbered list (Name.1, Name.2, ...)') });
}

/** A whole number written in decimal, within [min, max]. */
export function intParam(min: number, max: number) {
  return z.string()
    .regex(/^[0-9]{1,9}$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

const INSTANCE_ID = /^i-[0-9a-f]{8}$/;
const malformedInstanceId = coded('InvalidInstanceID.Malformed', 'malformed instance id');

/** Instance ids: EC2 form; Eucalyptus 3 printed them in upper case, so case is normalised. */
export const instanceIdParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s) => INSTANCE_ID.test(s), malformedInstanceId);

/**
 * Eucalyptus's `verbose` in an id list (`euca-describe-instances verbose`, euserv-describe-node-
 * controllers): every resource of every account. Any case; read as lower case.
 */
export const VERBOSE = 'verbose';

/** An instance id, or VERBOSE. */
export const instanceIdOrVerboseParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s) => s === VERBOSE || INSTANCE_ID.test(s), malformedInstanceId);

/**
 * EC2's filters, `Filter.N.Name` and `Filter.N.Value.M`: a name `isName` accepts (else
 * InvalidParameterValue listing `known`), and at least one value; with `invalidValue`, each value
 * it finds no reason against (else InvalidParameterValue naming `Filter.N.Value.M` and the reason).
 */
export function filterListParam<N extends string>(isName: (name: string) => name is N, known: string, invalidValue?: (name: N, value: string) => string | undefined) {
  return paramList(z.strictObject({
    Name: z.string().refine(isName, coded('InvalidParameterValue', `The filter is invalid; known filters: ${known}`)),
    Value: paramList(z.string()),
  }).superRefine((f, issues) => {
    if (invalidValue === undefined || !isName(f.Name) || !Array.isArray(f.Value)) return;
    f.Value.forEach((v, i) => {
      const why = invalidValue(f.Name as N, v);
      if (why !== undefined) issues.addIssue({ code: 'custom', path: ['Value', i], message: why });
    });
  })).transform((fs) => fs.map((f) => ({ name: f.Name as N, values: f.Value })));
}

/** Migration ids: `mig-` and 8 hex digits; case is normalised as for instance ids. */
export const migrationIdParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s) => /^mig-[0-9a-f]{8}$/.test(s), coded('InvalidMigrationID.Malformed', 'malformed migration id'));

/** AWS booleans: `true` or `false`, any case. */
export const boolParam = z.string()
  .transform((s) => s.toLowerCase())
  .refine((s) => s === 'true' || s === 'false', 'expected true or false')
  .transform((s) => s === 'true');

function showValue(v: unknown): string {
  // Absent: a coded check on a parameter the request left out (an omitted Tag.N.Key) shows it empty, as EC2 does.
  if (v === undefined) return '';
  return typeof v === 'string' ? showKey(v) : '(a list or group of parameters)';
}

/** How a zod issue reaches the admin, in the order one is chosen when several are found. */
type IssueKind = 'unrecognized_keys' | 'missing' | 'coded' | 'other';
const PRIORITY: readonly IssueKind[] = ['unrecognized_keys', 'missing', 'coded', 'other'];

interface Classified {
  readonly kind: IssueKind;
  readonly issue: z.core.$ZodIssue;
  readonly coded?: CodedParams;
}

function codedParams(issue: z.core.$ZodIssue): CodedParams | undefined {
  if (issue.code !== 'custom') return undefined;
  const p = issue.params as Partial<CodedParams> | undefined;
  return typeof p?.code === 'string' ? { code: p.code, fields: p.fields ?? {} } : undefined;
}

function classify(issue: z.core.$ZodIssue, params: ParamMap): Classified {
  if (issue.code === 'unrecognized_keys') return { kind: 'unrecognized_keys', issue };
  if (issue.message === LIST_MISSING || (issue.code === 'invalid_type' && valueAt(params, issue.path) === undefined)) {
    return { kind: 'missing', issue };
  }
  const coded = codedParams(issue);
  return coded ? { kind: 'coded', issue, coded } : { kind: 'other', issue };
}

function toError(c: Classified, params: ParamMap): FerryError {
  const { issue } = c;
  const parameter = awsParamName(issue.path);
  const value = showValue(valueAt(params, issue.path));
  if (c.kind === 'unrecognized_keys') {
    const keys = (issue as z.core.$ZodIssueUnrecognizedKeys).keys.map((k) => showKey(awsParamName([...issue.path, k])));
    return ClcErrors.make('UnknownParameter', { parameter: keys.join(', ') });
  }
  if (c.kind === 'missing') {
    return ClcErrors.make('MissingParameter', { parameter: issue.message === LIST_MISSING ? `${parameter}.1` : parameter });
  }
  if (c.coded) return ClcErrors.make(c.coded.code, { parameter, value, detail: issue.message, ...c.coded.fields });
  return ClcErrors.make('InvalidParameterValue', { parameter, value, detail: issue.message });
}

/**
 * Parses `params` with `schema`; on failure throws the highest-priority issue as a coded error
 * (unknown parameter, then missing, then a coded check, then any other invalid value).
 */
export function parseActionParams<S extends z.ZodType>(schema: S, params: ParamMap): Readonly<z.infer<S>> {
  const r = schema.safeParse(params);
  if (r.success) return deepFreeze(r.data) as Readonly<z.infer<S>>;
  const classified = r.error.issues.map((i) => classify(i, params));
  classified.sort((a, b) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind));
  const first = classified[0];
  if (!first) throw ClcErrors.make('InternalError', { detail: 'parameter validation failed without an issue' });
  throw toError(first, params);
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}
