/**
 * The key that signs NextTokens (clc/core/paging.ts), kept in clc.json so a CLC restart does not
 * break a client in the middle of a walk through pages. Made once, at CLC start or, for a CLC built
 * without that step (tests, the simulator), when the first token is issued.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../../shared/store/store.js';
import type { ClcState } from './clcStore.js';

export const PAGING_KEY_BYTES = 32;

/** The stored key; undefined while none was made (then no token was ever issued by this CLC). */
export function pagingKeyOf(state: Pick<ClcState, 'pagingKey'>): Buffer | undefined {
  return state.pagingKey === undefined ? undefined : Buffer.from(state.pagingKey, 'hex');
}

/** The stored key, made and persisted first if there is none. Concurrent calls agree on one key. */
export async function ensurePagingKey(store: Store<ClcState>, random: (n: number) => Buffer = randomBytes): Promise<Buffer> {
  const stored = pagingKeyOf(store.read());
  if (stored) return stored;
  const made = random(PAGING_KEY_BYTES).toString('hex');
  // Updates run one at a time: a second caller finds the first one's key in its draft and keeps it.
  const hex = await store.update((d) => (d.pagingKey ??= made));
  return Buffer.from(hex, 'hex');
}
