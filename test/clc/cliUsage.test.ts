/** Usage errors of the CLI (issue 17): a wrong command line or environment is a UsageError, printed as one `error:` line, exit 1. */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { resolveClient } from '../../clc/cli/clientCredentials.js';
import { describeFailure, UsageError } from '../../clc/cli/failures.js';
import { readBmcPassword } from '../../clc/cli/haArgs.js';

describe('CLI usage errors', () => {
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['one of the two key variables', () => resolveClient({ EC2_ACCESS_KEY: 'AK' }), /EC2_SECRET_KEY is not set/],
    ['the other one', () => resolveClient({ EC2_SECRET_KEY: 'SK' }), /EC2_ACCESS_KEY is not set/],
    ['an unreadable password file', () => readBmcPassword({ passwordFile: join(tmpdir(), 'ferry-no-such-password-file') }, {}), /cannot read the password file/],
    ['a password variable not set', () => readBmcPassword({ passwordEnv: 'FERRY_TEST_NO_SUCH_VAR' }, {}), /FERRY_TEST_NO_SUCH_VAR \(--password-env\) is not set/],
  ];
  it.each(cases)('%s is a UsageError, printed as `error: …`, exit 1', async (_n, run, message) => {
    const e = await run().then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(message);
    expect(describeFailure(e)).toEqual({ line: `error: ${(e as Error).message}`, exitCode: 1 });
  });
});
