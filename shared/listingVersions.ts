/**
 * Versions of a listing whose reader may already hold it (issue 19): the reader asks with the version
 * it holds and gets `unchanged` back instead of the whole listing when nothing in it changed, so a
 * steady cloud costs neither side an encode, a transfer and a validated decode of all of it per read.
 * Used for the CC's instance listing (the CLC's reads) and for an NC's report (the CC's checks over
 * the node watch, cc/nodeWatch.ts). A version is this process's random boot id and a counter bumped
 * whenever the listing's content differs from the last one: a restart never repeats a version an old
 * answer carried, and a version always stands for one content.
 */
import { randomBytes } from 'node:crypto';

export class ListingVersions {
  private readonly boot = randomBytes(6).toString('hex');
  private counter = 0;
  private last: string | undefined;

  /** The version of this listing (compared by content with the previous one). */
  versionOf(listing: unknown): string {
    const content = JSON.stringify(listing);
    if (content !== this.last) {
      this.last = content;
      this.counter++;
    }
    return `${this.boot}-${this.counter}`;
  }
}
