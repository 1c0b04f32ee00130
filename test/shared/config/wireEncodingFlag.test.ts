/** --wire-encoding, alike in the three daemons that call another tier: json by default, xml on request, anything else refused by name. */
import { describe, expect, it } from 'vitest';
import { parseCcConfig } from '../../../cc/config.js';
import { parseClcConfig } from '../../../clc/config.js';
import { parseNcConfig } from '../../../nc/config.js';
import { ConfigError } from '../../../shared/config/compileConfig.js';

type Parse = (argv: string[], env: Record<string, string>) => { readonly wireEncoding: string };

const daemons: [string, Parse, string[], string][] = [
  ['CLC', (a, e) => parseClcConfig(a, e), ['--state-dir', 's', '--insecure-plaintext'], 'FERRY_CLC_WIRE_ENCODING'],
  ['CC', (a, e) => parseCcConfig(a, e), ['--state-dir', 's', '--insecure-plaintext'], 'FERRY_CC_WIRE_ENCODING'],
  ['NC', (a, e) => parseNcConfig(a, e), ['--host', '127.0.64.1', '--state-dir', 's', '--insecure-plaintext'], 'FERRY_NC_WIRE_ENCODING'],
];

describe.each(daemons)('%s --wire-encoding', (_name, parse, base, envName) => {
  it('is json unless told, xml from the flag or the environment; the flag wins', () => {
    expect(parse(base, {}).wireEncoding).toBe('json');
    expect(parse([...base, '--wire-encoding', 'xml'], {}).wireEncoding).toBe('xml');
    expect(parse(base, { [envName]: 'xml' }).wireEncoding).toBe('xml');
    expect(parse([...base, '--wire-encoding', 'json'], { [envName]: 'xml' }).wireEncoding).toBe('json');
  });

  it('refuses any other value, naming the flag', () => {
    let problems: readonly string[] = [];
    try {
      parse([...base, '--wire-encoding', 'soap'], {});
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems = e.problems;
    }
    expect(problems).toEqual([expect.stringMatching(/^--wire-encoding.*must be one of: json, xml/)]);
  });
});
