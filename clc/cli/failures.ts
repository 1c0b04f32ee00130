/**
 * How a CLI command fails. Each kind prints one line on stderr and exits 1; the cloud's own error
 * prints as euca2ools did: `CODE: message`.
 */

/** The cloud answered with an EC2 error document. */
export class CloudError extends Error {
  constructor(readonly code: string, message: string, readonly status: number) {
    super(message);
    this.name = 'CloudError';
  }
}

/** No answer at all: refused, unresolvable, timed out. */
export class ConnectionFailed extends Error {
  constructor(readonly url: string, readonly reason: string) {
    super(`cannot connect to the cloud controller at ${url}: ${reason}`);
    this.name = 'ConnectionFailed';
  }
}

/** An answer that is not the EC2 XML we expect (wrong URL, a proxy's page, a newer server). */
export class UnexpectedResponse extends Error {
  constructor(readonly url: string, detail: string) {
    super(`unexpected response from ${url}: ${detail}`);
    this.name = 'UnexpectedResponse';
  }
}

/** The command line or its environment is wrong (a file that cannot be read, a variable not set): nothing was sent. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The line to print and the exit code for anything a command throws. */
export function describeFailure(e: unknown): { line: string; exitCode: number } {
  if (e instanceof CloudError) return { line: `${e.code}: ${e.message}`, exitCode: 1 };
  if (e instanceof ConnectionFailed || e instanceof UnexpectedResponse || e instanceof UsageError) return { line: `error: ${e.message}`, exitCode: 1 };
  return { line: `error: ${(e as Error)?.message ?? String(e)}`, exitCode: 1 };
}
