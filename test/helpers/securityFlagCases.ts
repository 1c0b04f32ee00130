/**
 * The combinations of --tls-dir and --insecure-plaintext (and their environment variables) every
 * daemon's config must accept or refuse the same way: one table, used by the CLC, CC and NC tests.
 */
export type FlagCase = readonly [name: string, argv: readonly string[], env: Readonly<Record<string, string>>];
export type AcceptedCase = readonly [...FlagCase, expected: { readonly tlsDir?: string; readonly insecurePlaintext: boolean }];
export type RefusedCase = readonly [...FlagCase, problem: RegExp];

/**
 * `envPrefix`: FERRY_CC, FERRY_CLC or FERRY_NC. `named(flag)` is how that daemon's errors name a
 * flag: `--tls-dir` for the CLC and CC, `--tls-dir (FERRY_NC_TLS_DIR)` for the NC.
 */
export function securityFlagCases(envPrefix: string, named: (flag: string, env: string) => string): { accepted: AcceptedCase[]; refused: RefusedCase[] } {
  const tlsEnv = `${envPrefix}_TLS_DIR`;
  const plainEnv = `${envPrefix}_INSECURE_PLAINTEXT`;
  const esc = (s: string): string => s.replace(/[()]/g, '\\$&');
  const tlsDir = esc(named('--tls-dir', tlsEnv));
  const plain = esc(named('--insecure-plaintext', plainEnv));
  return {
    accepted: [
      ['--tls-dir', ['--tls-dir', 'certs'], {}, { tlsDir: 'certs', insecurePlaintext: false }],
      [tlsEnv, [], { [tlsEnv]: 'certs' }, { tlsDir: 'certs', insecurePlaintext: false }],
      ['--insecure-plaintext', ['--insecure-plaintext'], {}, { insecurePlaintext: true }],
      [`${plainEnv}=1`, [], { [plainEnv]: '1' }, { insecurePlaintext: true }],
      [`${plainEnv}=true`, [], { [plainEnv]: 'true' }, { insecurePlaintext: true }],
    ],
    refused: [
      ['neither flag', [], {}, new RegExp(`^${tlsDir}: required unless --insecure-plaintext is given: run ferry-init .* --insecure-plaintext`)],
      [`${plainEnv}=0 alone`, [], { [plainEnv]: '0' }, new RegExp(`^${tlsDir}: required unless --insecure-plaintext`)],
      ['both flags', ['--tls-dir', 'certs', '--insecure-plaintext'], {}, new RegExp(`^${plain}: contradicts --tls-dir`)],
      [`--tls-dir and ${plainEnv}=1`, ['--tls-dir', 'certs'], { [plainEnv]: '1' }, new RegExp(`^${plain}: contradicts --tls-dir`)],
      ['an empty --tls-dir', ['--tls-dir', ''], {}, new RegExp(`^${tlsDir}: must name a directory`)],
      [`a bad ${plainEnv}`, ['--tls-dir', 'certs'], { [plainEnv]: 'yes' }, new RegExp(`^${plain}: takes no value; its variable must be true, false, 1 or 0`)],
    ],
  };
}
