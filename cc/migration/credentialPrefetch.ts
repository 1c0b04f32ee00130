/**
 * The source's credential signed while the destination prepares (issue 19: the commit then only
 * sends). When the plan driver prepares an item's destination it also asks for the source's
 * credential of the same item, destination and generation; the commit takes it, or issues one itself
 * when none is held (a CC restarted in between, a repeat of a failed commit, a re-join's generation).
 *
 * Validity is unchanged: a credential's lifetime covers the item's prepare and ready deadlines, the
 * migrating allowance and a grace from its issue (marks.ts credentialLifetimeMs), and a commit can
 * only come within prepare + ready of the prepare. Each credential is still handed out once: a take
 * removes it. The source's private key waits in the CC's memory between the prepare and the commit
 * (it never did before: it went out in the commit call); it is dropped when taken, when its lifetime
 * is over (`sweep`), and at most `limit` are held: past that nothing is signed ahead, so a burst only
 * costs the commit its old latency, never a refusal.
 */
import type { CredentialIssuer, CredentialRequest } from './credentialIssuer.js';
import type { MigrationCredential } from '../../shared/protocol/migrationProtocol.js';

interface Held {
  readonly credential: Promise<MigrationCredential>;
  readonly until: number;
}

const keyOf = (r: CredentialRequest): string => [r.migrationId, r.instanceId, r.side, r.host, r.peerHost, r.generation].join('|');

export class CredentialPrefetch implements CredentialIssuer {
  private readonly held = new Map<string, Held>();

  constructor(private readonly issuer: CredentialIssuer, private readonly now: () => number, private readonly limit = 64) {}

  /** Starts signing `r` in the background; a failure is forgotten (the commit issues its own). */
  prefetch(r: CredentialRequest): void {
    const key = keyOf(r);
    if (this.held.has(key) || this.held.size >= this.limit) return;
    const credential = this.issuer.issue(r);
    credential.catch(() => {
      if (this.held.get(key)?.credential === credential) this.held.delete(key);
    });
    this.held.set(key, { credential, until: this.now() + r.lifetimeMs });
  }

  /** The credential signed ahead for exactly `r`, taken once; otherwise one issued now. */
  async issue(r: CredentialRequest): Promise<MigrationCredential> {
    const key = keyOf(r);
    const h = this.held.get(key);
    this.held.delete(key);
    if (h && h.until > this.now()) {
      try {
        return await h.credential;
      } catch {
        // Signing ahead failed: sign now, and let that failure (if any) be the answer.
      }
    }
    return this.issuer.issue(r);
  }

  /** Drops credentials whose lifetime is over (their item ended without a commit). */
  sweep(): void {
    const now = this.now();
    for (const [key, h] of this.held) if (h.until <= now) this.held.delete(key);
  }

  size(): number {
    return this.held.size;
  }
}
