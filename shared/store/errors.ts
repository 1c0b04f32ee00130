import { defineErrors, server } from '../errors/registry.js';

/** Store failures. None is retryable by a client: a store that cannot be read stops the service. */
export const StoreErrors = defineErrors({
  StoreCorrupt: server(500, 'store {file} is not valid JSON ({detail}); refusing to start with a silent reset', false),
  StoreSchemaMismatch: server(500, 'store {file} has schema version {found} of kind {kind}; this build reads version {expected} of kind {expectedKind}', false),
  StoreInvalid: server(500, 'store {file} does not match its schema: {detail}', false),
  StoreUnreadable: server(500, 'store {file} cannot be read: {detail}', false),
  StoreWriteFailed: server(503, 'store {file} could not be written: {detail}', true),
});
