import { describe, expect, it } from 'vitest';
import { ListingVersions } from '../../shared/listingVersions.js';

describe('ListingVersions', () => {
  it('keeps a version while the listing is equal in content, moves it when anything differs', () => {
    const v = new ListingVersions();
    const a = v.versionOf({ instances: [{ instanceId: 'i-1', state: 'running' }], complete: true });
    expect(v.versionOf({ instances: [{ instanceId: 'i-1', state: 'running' }], complete: true })).toBe(a);
    const b = v.versionOf({ instances: [{ instanceId: 'i-1', state: 'stopped' }], complete: true });
    expect(b).not.toBe(a);
    const c = v.versionOf({ instances: [{ instanceId: 'i-1', state: 'stopped' }], complete: false });
    expect(c).not.toBe(b);
    // Back to an earlier content: a new version all the same (only the last one is remembered).
    expect(v.versionOf({ instances: [{ instanceId: 'i-1', state: 'running' }], complete: true })).not.toBe(a);
  });

  it('never repeats a version across two lives of the CC', () => {
    const listing = { instances: [], complete: true };
    expect(new ListingVersions().versionOf(listing)).not.toBe(new ListingVersions().versionOf(listing));
  });
});
