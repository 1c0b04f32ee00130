/**
 * The NC's last look at its hypervisor's domains, shared by the node runner and the migration
 * item executors. Kept while the hypervisor is unreachable, so describe can answer with last-known states.
 */
import type { Clock } from '../shared/clock.js';
import type { DomainInfo } from './hypervisor/driver.js';
import { observe, type Observation } from './instanceView.js';

export class DomainCache {
  private obs: Observation | undefined;

  constructor(private readonly clock: Clock) {}

  /** The last successful list(), patched by what the NC did since; undefined before the first. */
  get current(): Observation | undefined {
    return this.obs;
  }

  /** A fresh list() replaces everything. */
  replace(domains: readonly DomainInfo[]): Observation {
    this.obs = observe(domains, this.clock.now());
    return this.obs;
  }

  /** One domain as a driver call just returned it. */
  note(domain: DomainInfo): void {
    if (!this.obs) return;
    const domains = new Map(this.obs.domains);
    domains.set(domain.id, domain);
    this.obs = { at: this.clock.now(), domains };
  }

  /** One domain the NC just saw go (destroyed, migrated away). */
  forget(id: string): void {
    if (!this.obs?.domains.has(id)) return;
    const domains = new Map(this.obs.domains);
    domains.delete(id);
    this.obs = { at: this.clock.now(), domains };
  }
}
