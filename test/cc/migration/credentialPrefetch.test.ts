import { describe, expect, it } from 'vitest';
import type { CredentialIssuer, CredentialRequest } from '../../../cc/migration/credentialIssuer.js';
import { CredentialPrefetch } from '../../../cc/migration/credentialPrefetch.js';
import type { MigrationCredential } from '../../../shared/protocol/migrationProtocol.js';

/** An issuer numbering what it signs; fails the calls the test names. */
function counting(failing: Set<number> = new Set()) {
  const asked: CredentialRequest[] = [];
  const issuer: CredentialIssuer = {
    async issue(r) {
      const n = asked.push(r) - 1;
      await Promise.resolve();
      if (failing.has(n)) throw new Error(`signing ${n} failed`);
      return { caPem: 'ca', certPem: `cert-${n}-${r.side}-${r.generation}`, keyPem: `key-${n}` } satisfies MigrationCredential;
    },
  };
  return { issuer, asked };
}

const source: CredentialRequest = { migrationId: 'mig-1', instanceId: 'i-1', side: 'source', host: '127.0.0.1', peerHost: '127.0.0.2', generation: 0, lifetimeMs: 1000 };

describe('CredentialPrefetch', () => {
  it('hands the credential signed ahead to exactly one take; the next take signs a new one', async () => {
    const c = counting();
    let now = 0;
    const p = new CredentialPrefetch(c.issuer, () => now);
    p.prefetch(source);
    p.prefetch(source); // already held: not signed twice
    expect(c.asked).toHaveLength(1);
    now = 500;
    expect((await p.issue(source)).certPem).toBe('cert-0-source-0');
    expect((await p.issue(source)).certPem).toBe('cert-1-source-0');
    expect(p.size()).toBe(0);
  });

  it.each<[string, Partial<CredentialRequest>]>([
    ['another destination', { peerHost: '127.0.0.3' }],
    ['another generation', { generation: 1 }],
    ['another item', { instanceId: 'i-2' }],
    ['the other side', { side: 'destination' as const, host: '127.0.0.2', peerHost: '127.0.0.1' }],
  ])('a take for %s signs its own and leaves the held one', async (_what, change) => {
    const c = counting();
    const p = new CredentialPrefetch(c.issuer, () => 0);
    p.prefetch(source);
    const got = await p.issue({ ...source, ...change });
    expect(got.certPem).toBe(`cert-1-${change.side ?? 'source'}-${change.generation ?? 0}`);
    expect(p.size()).toBe(1);
  });

  it('a credential whose lifetime is over is never handed out, and sweep drops it', async () => {
    const c = counting();
    let now = 0;
    const p = new CredentialPrefetch(c.issuer, () => now);
    p.prefetch(source);
    p.prefetch({ ...source, instanceId: 'i-2' });
    now = 1000;
    expect((await p.issue(source)).certPem).toBe('cert-2-source-0');
    p.sweep();
    expect(p.size()).toBe(0);
  });

  it('signing ahead that failed is forgotten: the take signs now', async () => {
    const c = counting(new Set([0]));
    const p = new CredentialPrefetch(c.issuer, () => 0);
    p.prefetch(source);
    expect((await p.issue(source)).certPem).toBe('cert-1-source-0');
  });

  it('past its limit it signs nothing ahead, and every take still gets a credential', async () => {
    const c = counting();
    const p = new CredentialPrefetch(c.issuer, () => 0, 2);
    for (const id of ['i-1', 'i-2', 'i-3']) p.prefetch({ ...source, instanceId: id });
    expect(p.size()).toBe(2);
    const got = await Promise.all(['i-1', 'i-2', 'i-3'].map((id) => p.issue({ ...source, instanceId: id })));
    expect(new Set(got.map((g) => g.keyPem)).size).toBe(3);
    expect(c.asked).toHaveLength(3);
  });
});
