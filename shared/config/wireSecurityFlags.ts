/**
 * The two transport-security flags every tier takes, --tls-dir and --insecure-plaintext, and the
 * rule that exactly one is given: mutual TLS is the default, plaintext only on purpose
 * (docs/SECURITY.md). One place, so the CLC, CC and NC refuse the same combinations the same way.
 */
import { z } from 'zod';

/** ferry-init's output directory (ca.pem, <role>-<host>.pem/.key). */
export const tlsDirFlag = z.string().min(1, 'must name a directory').optional();

/** A bare flag (commander gives true) or its environment variable set to true/false/1/0. */
export const insecurePlaintextFlag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])], { error: 'takes no value; its variable must be true, false, 1 or 0' }).optional()
  .transform((v) => v === true || v === 'true' || v === '1');

export interface WireSecurityFlags {
  readonly tlsDir?: string | undefined;
  readonly insecurePlaintext: boolean;
}

export const NO_SECURITY_CHOICE = 'required unless --insecure-plaintext is given: run ferry-init (node dist/scripts/ferry-init.js --dir certs ...) '
  + 'and pass --tls-dir certs for mutual TLS, or pass --insecure-plaintext to run without TLS on purpose';

/** For a schema's superRefine: neither flag, or both, is a configuration error (exit 2). */
export function checkWireSecurityFlags(f: WireSecurityFlags, ctx: z.RefinementCtx): void {
  if (f.tlsDir === undefined && !f.insecurePlaintext) ctx.addIssue({ code: 'custom', path: ['tlsDir'], message: NO_SECURITY_CHOICE });
  if (f.tlsDir !== undefined && f.insecurePlaintext) ctx.addIssue({ code: 'custom', path: ['insecurePlaintext'], message: 'contradicts --tls-dir: give one' });
}

/** The scheme a peer URL must use under these flags: a mismatch would only fail later, at every call. */
export function peerScheme(f: WireSecurityFlags): 'https:' | 'http:' {
  return f.tlsDir !== undefined ? 'https:' : 'http:';
}

/** A problem with `url`'s scheme under these flags, or undefined (also when the flags themselves are wrong). */
export function peerUrlProblem(f: WireSecurityFlags, url: string): string | undefined {
  if ((f.tlsDir !== undefined) === f.insecurePlaintext) return undefined;
  const want = peerScheme(f);
  if (new URL(url).protocol === want) return undefined;
  return want === 'https:' ? 'must be https:// with --tls-dir' : 'must be http:// with --insecure-plaintext (https:// needs --tls-dir)';
}
