import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PkiErrors } from '../../../shared/pki/errors.js';
import { WireErrors } from '../../../shared/wire/errors.js';

const security = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'SECURITY.md'), 'utf8');
const section = security.slice(security.indexOf('## Cloud PKI and mutual TLS'));

describe('PKI and mTLS error codes are documented in docs/SECURITY.md', () => {
  it('has the section', () => {
    expect(security).toContain('## Cloud PKI and mutual TLS');
  });

  it.each([
    ...Object.entries(PkiErrors.table),
    ...(['PeerNotAuthorized', 'PeerHostMismatch', 'OperationHeaderMissing', 'OperationMismatch', 'RequestTooLarge', 'XmlLimitExceeded', 'MalformedXml', 'JsonLimitExceeded', 'MalformedJson', 'UnsupportedMediaType'] as const)
      .map((code) => [code, WireErrors.table[code]] as const),
  ])('%s with its HTTP status', (code, spec) => {
    expect(section).toMatch(new RegExp(`\\| \`${code}\` \\| ${spec.status} \\|`));
  });
});
