/** The lab Redfish BMC's pure part (scripts/redfish-bmc/redfishModel.ts): routing, auth, resets, faults. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BMC_FAULTS, credentialsMatch, handleRedfish, normalizePath, RESET_TARGET, RESET_TYPES, ROOT, SYSTEM, SYSTEMS,
  type BmcView, type RedfishRequest,
} from '../../scripts/redfish-bmc/redfishModel.js';

const view: BmcView = { power: 'On', fault: 'none', user: 'admin', password: 'pw:with:colons' };
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const AUTH = basic('admin', 'pw:with:colons');
/** `null`: no Authorization header. */
const get = (url: string, authorization: string | null = AUTH): RedfishRequest => ({ method: 'GET', url, authorization: authorization ?? undefined, body: '' });
const reset = (body: string, contentType = 'application/json'): RedfishRequest => ({ method: 'POST', url: RESET_TARGET, authorization: AUTH, contentType, body });
const errorId = (body: unknown): string => (body as { error: { code: string } }).error.code;

describe('resources', () => {
  it('serves the service root without credentials, pointing at the Systems collection', () => {
    const r = handleRedfish(get(`${ROOT}/`, null), view);
    expect(r.status).toBe(200);
    expect((r.body as { Systems: { '@odata.id': string } }).Systems['@odata.id']).toBe(SYSTEMS);
  });

  it('lists one system whose PowerState and Reset target fence_redfish reads', () => {
    const members = (handleRedfish(get(SYSTEMS), view).body as { Members: { '@odata.id': string }[] }).Members;
    expect(members.map((m) => m['@odata.id'])).toEqual([SYSTEM]);
    for (const power of ['On', 'Off'] as const) {
      const sys = handleRedfish(get(SYSTEM), { ...view, power }).body as { PowerState: string; Actions: Record<string, { target: string }> };
      expect(sys.PowerState).toBe(power);
      expect(sys.Actions['#ComputerSystem.Reset']?.target).toBe(RESET_TARGET);
    }
  });

  const errors: [string, RedfishRequest, BmcView, number, string][] = [
    ['an unknown resource', get(`${SYSTEMS}/2`), view, 404, 'ResourceMissingAtURI'],
    ['POST on a resource', { ...get(SYSTEM), method: 'POST' }, view, 405, 'OperationNotAllowed'],
    ['GET on the action', get(RESET_TARGET), view, 405, 'OperationNotAllowed'],
    ['no credentials', get(SYSTEM, null), view, 401, 'NoValidSession'],
    ['a wrong password', get(SYSTEM, basic('admin', 'pw')), view, 401, 'NoValidSession'],
    ['a wrong user', get(SYSTEM, basic('root', 'pw:with:colons')), view, 401, 'NoValidSession'],
    ['a non-basic scheme', get(SYSTEM, 'Bearer abc'), view, 401, 'NoValidSession'],
    ['right credentials under the wrong-credentials fault', get(SYSTEMS), { ...view, fault: 'wrong-credentials' }, 401, 'NoValidSession'],
    ['a reset without JSON content type', reset('{"ResetType":"On"}', 'text/plain'), view, 415, 'UnsupportedMediaType'],
    ['a reset with a malformed body', reset('{ResetType'), view, 400, 'MalformedJSON'],
    ['a reset with a JSON array', reset('["On"]'), view, 400, 'MalformedJSON'],
    ['a reset without ResetType', reset('{}'), view, 400, 'ActionParameterMissing'],
    ['an unknown ResetType', reset('{"ResetType":"Explode"}'), view, 400, 'ActionParameterValueNotInList'],
    ['a ResetType of the wrong type', reset('{"ResetType":1}'), view, 400, 'ActionParameterValueNotInList'],
  ];
  it.each(errors)('answers %s with a Redfish error', (_name, req, v, status, id) => {
    const r = handleRedfish(req, v);
    expect(r.status).toBe(status);
    expect(errorId(r.body)).toBe(`Base.1.8.${id}`);
    expect(r.effect).toBeUndefined();
  });

  it('asks for basic credentials on a 401 and names the allowed method on a 405', () => {
    expect(handleRedfish(get(SYSTEM, null), view).headers['WWW-Authenticate']).toMatch(/^Basic /);
    expect(handleRedfish(get(RESET_TARGET), view).headers.Allow).toBe('POST');
  });
});

describe('resets', () => {
  const effects: [string, string | undefined][] = [
    ['On', 'on'], ['ForceOff', 'off'], ['GracefulShutdown', 'off'], ['ForceRestart', 'restart'],
    ['GracefulRestart', 'restart'], ['PowerCycle', 'restart'], ['Nmi', undefined],
  ];
  it.each(effects)('%s is acknowledged with 204 and powers %s', (type, effect) => {
    const r = handleRedfish(reset(JSON.stringify({ ResetType: type })), view);
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    expect(r.effect).toBe(effect);
  });

  it('covers every advertised ResetType', () => {
    expect(effects.map(([t]) => t).sort()).toEqual([...RESET_TYPES].sort());
  });

  it('under the stuck fault, acknowledges every reset and changes nothing', () => {
    for (const type of RESET_TYPES) {
      const r = handleRedfish(reset(JSON.stringify({ ResetType: type })), { ...view, fault: 'stuck' });
      expect([r.status, r.effect]).toEqual([204, undefined]);
    }
  });
});

describe('helpers', () => {
  it('normalizes trailing slashes and drops queries', () => {
    expect(normalizePath('/redfish/v1/')).toBe(ROOT);
    expect(normalizePath(`${SYSTEM}?$expand=*`)).toBe(SYSTEM);
    expect(normalizePath('/')).toBe('/');
  });

  it('matches credentials containing colons and refuses malformed headers', () => {
    expect(credentialsMatch(AUTH, 'admin', 'pw:with:colons')).toBe(true);
    expect(credentialsMatch('Basic', 'admin', 'pw:with:colons')).toBe(false);
    expect(credentialsMatch('Basic !!!', 'admin', 'pw:with:colons')).toBe(false);
  });
});

describe('any request', () => {
  it('gets a reply with a known status, never a throw; only an authorized reset has an effect', () => {
    const paths = fc.constantFrom('/', '/redfish', `${ROOT}/`, SYSTEMS, SYSTEM, RESET_TARGET, `${SYSTEM}/x`);
    fc.assert(fc.property(
      fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'), fc.oneof(paths, fc.string()), fc.option(fc.oneof(fc.constant(AUTH), fc.string())),
      fc.option(fc.constantFrom('application/json', 'text/plain')), fc.oneof(fc.string(), fc.constantFrom(...RESET_TYPES).map((t) => JSON.stringify({ ResetType: t }))),
      fc.constantFrom(...BMC_FAULTS),
      (method, url, authorization, contentType, body, fault) => {
        const r = handleRedfish({ method, url, authorization: authorization ?? undefined, contentType: contentType ?? undefined, body }, { ...view, fault });
        expect([200, 204, 400, 401, 404, 405, 415]).toContain(r.status);
        if (r.effect !== undefined) {
          expect([method, normalizePath(url), authorization]).toEqual(['POST', RESET_TARGET, AUTH]);
          expect(['stuck', 'wrong-credentials']).not.toContain(fault);
        }
      },
    ));
  });
});
