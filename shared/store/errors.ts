import { defineErrors, server } from '../errors/registry.js';

/**
 * Store failures. The file-store ones are not retryable by a client: a store that cannot be read stops
 * the service. The etcd backend's (shared/store/etcdStore.ts) are about one write: refused whole, never
 * half-applied; StoreConflict and StoreUnavailable pass by themselves, StoreNotLeader does not.
 */
export const StoreErrors = defineErrors({
  StoreCorrupt: server(500, 'store {file} is not valid JSON ({detail}); refusing to start with a silent reset', false),
  StoreSchemaMismatch: server(500, 'store {file} has schema version {found} of kind {kind}; this build reads version {expected} of kind {expectedKind}', false),
  StoreInvalid: server(500, 'store {file} does not match its schema: {detail}', false),
  StoreUnreadable: server(500, 'store {file} cannot be read: {detail}', false),
  StoreWriteFailed: server(503, 'store {file} could not be written: {detail}', true),
  StoreConflict: server(409, 'store {file} changed under this write (another writer at revision {revision}); nothing was written: read again and retry', true),
  StoreNotLeader: server(503, 'store {file}: this replica is not the leader (the leader is {leader}); nothing was written', false),
  StoreUnavailable: server(503, 'store {file}: etcd did not answer within {timeoutMs} ms ({detail}); the write was not acknowledged', true),
  StoreTooLarge: server(500, 'store {file}: one write would send {detail}, over etcd\'s limit of {limit}; nothing was written', false),
});
