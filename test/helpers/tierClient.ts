/**
 * Tests that dial a CC or an NC directly do it as a tier would: over mutual TLS, presenting the
 * certificate of `<role>-<host>` from a cloud's certs directory (the layout's `<baseDir>/certs`).
 */
import type { PeerRole } from '../../shared/pki/spec.js';
import { loadTlsIdentity } from '../../shared/pki/tlsIdentity.js';
import { HttpWireTransport } from '../../shared/wire/httpTransport.js';
import { clientTlsOptions } from '../../shared/wire/tls.js';
import type { WireEncoding } from '../../shared/wire/wireEncoding.js';

export interface TierClientOptions {
  readonly certsDir: string;
  /** Whose certificate to present, e.g. 'clc' to call a CC as its CLC does. */
  readonly role: PeerRole;
  readonly host: string;
  /** CC_PATH or NC_PATH. */
  readonly path: string;
  readonly timeoutMs?: number;
  /** What requests are sent in (the transport's default, json, unless told). */
  readonly encoding?: WireEncoding;
}

/** The caller closes it (transport.close()) when done. */
export function tierClient(o: TierClientOptions): HttpWireTransport {
  return new HttpWireTransport({
    path: o.path, defaultTimeoutMs: o.timeoutMs ?? 10_000, ...(o.encoding ? { encoding: o.encoding } : {}), tls: clientTlsOptions(loadTlsIdentity(o.certsDir, o.role, o.host)),
  });
}
