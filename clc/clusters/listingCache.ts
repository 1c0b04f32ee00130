/**
 * The CLC's copy of each CC's last instance listing (issue 19, the API path). A read asks the CC
 * with the version it holds; an `unchanged` answer hands back the copy itself, the very object of
 * the last full answer, so nothing is decoded or validated again and what the CLC builds from it
 * (the rendered reservations, clc/api/actions/describeInstances.ts) can be reused as long as it
 * is the same object. A CC that does not version its answers (an older one) is simply asked in full.
 */
import type { ClcCcRequest, ClcCcResponse } from './ccContract.js';

type Listing = ClcCcResponse<'ccDescribeInstances'>;

export class ListingCache {
  private readonly held = new Map<string, Listing>();

  /** `ask` calls the CC; the request it gets carries the known version, if any. */
  async describe(partition: string, req: ClcCcRequest<'ccDescribeInstances'>, ask: (req: ClcCcRequest<'ccDescribeInstances'>) => Promise<Listing>): Promise<Listing> {
    // A caller naming a version of its own gets the CC's answer as is.
    if (req.knownVersion !== undefined) return ask(req);
    const held = this.held.get(partition);
    const answer = await ask(held?.version !== undefined ? { knownVersion: held.version } : {});
    if (answer.unchanged === true) {
      if (held !== undefined && answer.version === held.version) return held;
      // Unchanged against a copy this CLC does not hold (it was replaced meanwhile): ask in full.
      return this.keep(partition, await ask({}));
    }
    return this.keep(partition, answer);
  }

  private keep(partition: string, answer: Listing): Listing {
    if (answer.version !== undefined && answer.unchanged !== true) this.held.set(partition, answer);
    else this.held.delete(partition);
    return answer;
  }
}
