import { defineErrors, client, server } from '../errors/registry.js';

/** Errors of the cloud PKI: building certificates (ferry-init) and loading a daemon's TLS files. */
export const PkiErrors = defineErrors({
  InvalidPkiSpec: client(400, 'invalid PKI request: {detail}'),
  PkiFileExists: client(409, '{path} already exists (give --force to replace it; the old file is moved aside)'),
  TlsFileMissing: client(400, 'TLS directory {dir} has no {file} (run ferry-init for {role} {host})'),
  TlsFileUnreadable: client(400, '{path} is not a usable PEM file: {detail}'),
  CertificateRoleMismatch: client(400, '{path} is a certificate for role {actual}, not {expected}'),
  PkiWriteFailed: server(500, 'could not write {path}: {detail}', false),
});
