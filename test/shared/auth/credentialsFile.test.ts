/** The eucarc-style credentials file: keys of the right shape, a round trip, and errors that name the file but never a key. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_KEY_PATTERN, CredentialsFileError, formatCredentialsFile, generateCredentials, parseCredentialsFile, SECRET_KEY_PATTERN,
} from '../../../shared/auth/credentialsFile.js';

describe('credentials file', () => {
  it('generates AKI + 17 and 40-character keys from any random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (seed) => {
      let n = 0;
      const random = (size: number) => Buffer.from(Array.from({ length: size }, () => seed[n++ % seed.length] as number ^ (n & 0xff)));
      const c = generateCredentials(random);
      expect(c.accessKey).toMatch(ACCESS_KEY_PATTERN);
      expect(c.secretKey).toMatch(SECRET_KEY_PATTERN);
    }), { numRuns: 100 });
  });

  it('round-trips through the file and can be sourced by a shell (export NAME=value)', () => {
    const c = { ...generateCredentials(), url: 'http://127.0.0.1:8773/services/Eucalyptus' };
    const text = formatCredentialsFile(c, 'line one\nline two');
    expect(text).toMatch(/^# line one\n# line two\n/);
    expect(text).toContain(`export EC2_ACCESS_KEY=${c.accessKey}\n`);
    expect(parseCredentialsFile(text, 'f')).toEqual(c);
  });

  const good: [string, string, { accessKey: string; secretKey: string; url: string | undefined }][] = [
    ['plain', 'EC2_ACCESS_KEY=AK\nEC2_SECRET_KEY=SK\n', { accessKey: 'AK', secretKey: 'SK', url: undefined }],
    ['quoted, exported, CRLF, comments', '# c\r\nexport EC2_ACCESS_KEY="AK"\r\n\r\nexport EC2_SECRET_KEY=\'S/K+\'\r\nEC2_URL=http://x/\r\n', { accessKey: 'AK', secretKey: 'S/K+', url: 'http://x/' }],
  ];
  it.each(good)('reads %s', (_n, text, want) => {
    expect(parseCredentialsFile(text, 'f')).toEqual(want);
  });

  const bad: [string, string, RegExp][] = [
    ['no access key', 'EC2_SECRET_KEY=secret-value\n', /EC2_ACCESS_KEY is missing/],
    ['no secret key', 'EC2_ACCESS_KEY=AK\n', /EC2_SECRET_KEY is missing/],
    ['a line that is not NAME=value', 'EC2_ACCESS_KEY=AK\nEC2_SECRET_KEY secret-value\n', /line 2 is not NAME=value/],
  ];
  it.each(bad)('refuses %s, naming the file and not the secret', (_n, text, re) => {
    let err: unknown;
    try {
      parseCredentialsFile(text, '/state/admin.credentials');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CredentialsFileError);
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).toContain('/state/admin.credentials');
    expect((err as Error).message).not.toContain('secret-value');
  });
});
