/**
 * The store-backend flags of the CLC and the CC (issue 21): `--store file` (the default: JSON files
 * in the state directory, nothing else needed) or `--store etcd` with the cluster's endpoints and a
 * key prefix. One place, so both daemons name and check them alike.
 */
import { z } from 'zod';
import { DEFAULT_ETCD_LIMITS } from '../store/etcdChunks.js';
import { DEFAULT_ETCD_TIMEOUT_MS } from '../store/etcdStore.js';
import { intFlag, type FlagField } from './flagTable.js';

export const STORE_BACKENDS = ['file', 'etcd'] as const;
export type StoreBackendKind = (typeof STORE_BACKENDS)[number];
export const DEFAULT_ETCD_PREFIX = 'ferry/';

function endpointProblem(s: string): string | undefined {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return `"${s}" is not a URL`;
  }
  if (u.protocol !== 'http:') return `"${s}": only http:// client URLs are supported (no TLS to etcd yet)`;
  if (u.port === '' || u.pathname !== '/' || u.search !== '' || u.username !== '') return `"${s}" must be http://host:port`;
  return undefined;
}

const endpointList = z.string().transform((s, ctx): string[] => {
  const out: string[] = [];
  for (const e of s.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    const problem = endpointProblem(e);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    else out.push(new URL(e).origin);
  }
  if (out.length === 0) ctx.addIssue({ code: 'custom', message: 'at least one http://host:port is required' });
  return out;
});

/** Schema fields, to spread into a daemon's z.object. */
export const storeShape = {
  store: z.enum(STORE_BACKENDS, { error: 'must be file or etcd' }).default('file'),
  etcdEndpoints: endpointList.optional(),
  etcdPrefix: z.string().regex(/^[A-Za-z0-9._/-]*\/$/, 'must be letters, digits, . _ - / and end with /').default(DEFAULT_ETCD_PREFIX),
  etcdTimeoutMs: intFlag(DEFAULT_ETCD_TIMEOUT_MS, 100, 600_000),
  etcdMaxTxnOps: intFlag(DEFAULT_ETCD_LIMITS.maxTxnOps, 8, 1_000_000),
  etcdMaxRequestBytes: intFlag(DEFAULT_ETCD_LIMITS.maxRequestBytes, 65_536, 64 * 1024 * 1024),
};

type StoreFlags = { readonly store: StoreBackendKind; readonly etcdEndpoints?: readonly string[] | undefined };

/** Cross-field rules, for the daemon's superRefine. */
export function checkStoreFlags(r: StoreFlags, ctx: z.RefinementCtx): void {
  if (r.store === 'etcd' && r.etcdEndpoints === undefined) ctx.addIssue({ code: 'custom', path: ['etcdEndpoints'], message: 'is required with --store etcd' });
  if (r.store === 'file' && r.etcdEndpoints !== undefined) ctx.addIssue({ code: 'custom', path: ['etcdEndpoints'], message: 'needs --store etcd' });
}

export function storeFields(envPrefix: string, what: string): FlagField[] {
  return [
    ['store', '--store <backend>', `${envPrefix}_STORE`, `where ${what} is kept: file (JSON files in --state-dir) or etcd (--etcd-endpoints) (file)`],
    ['etcdEndpoints', '--etcd-endpoints <urls>', `${envPrefix}_ETCD_ENDPOINTS`, 'with --store etcd: the etcd members\' client URLs, comma-separated (http://host:port)'],
    ['etcdPrefix', '--etcd-prefix <prefix>', `${envPrefix}_ETCD_PREFIX`, `with --store etcd: the key prefix of this cloud's keys, ending in / (${DEFAULT_ETCD_PREFIX})`],
    ['etcdTimeoutMs', '--etcd-timeout-ms <ms>', `${envPrefix}_ETCD_TIMEOUT_MS`, `with --store etcd: a write not acknowledged within this is refused StoreUnavailable (${DEFAULT_ETCD_TIMEOUT_MS})`],
    ['etcdMaxTxnOps', '--etcd-max-txn-ops <n>', `${envPrefix}_ETCD_MAX_TXN_OPS`, `with --store etcd: the etcd cluster's --max-txn-ops; a larger write is refused StoreTooLarge (${DEFAULT_ETCD_LIMITS.maxTxnOps})`],
    ['etcdMaxRequestBytes', '--etcd-max-request-bytes <n>', `${envPrefix}_ETCD_MAX_REQUEST_BYTES`, `with --store etcd: the etcd cluster's --max-request-bytes (${DEFAULT_ETCD_LIMITS.maxRequestBytes})`],
  ];
}
