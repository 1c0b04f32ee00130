/**
 * EC2 paging at the API edge: the MaxResults / NextToken parameters, the cursor a NextToken carries
 * (or InvalidPaginationToken), and the page with the NextToken of the rest. The token logic is
 * clc/core/paging.ts; the key is clc.json's (clc/state/pagingKey.ts).
 */
import { z } from 'zod';
import type { Store } from '../../shared/store/store.js';
import { ClcErrors } from '../core/errors.js';
import { issuePageToken, MAX_PAGE_SIZE, MIN_PAGE_SIZE, readPageToken, takePage, type PageOrder, type PageScope } from '../core/paging.js';
import type { ClcState } from '../state/clcStore.js';
import { ensurePagingKey, pagingKeyOf } from '../state/pagingKey.js';
import { coded, intParam } from './actionParams.js';

/** The parameters with EC2's MaxResults range for the action, to spread into its schema. */
export function pagingParamsUpTo(maxPageSize: number) {
  return {
    MaxResults: intParam(MIN_PAGE_SIZE, maxPageSize).optional(),
    NextToken: z.string().optional(),
  };
}

/** The parameters of the actions whose MaxResults goes to 1000 (DescribeInstances, DescribeTags, ...). */
export const pagingParams = pagingParamsUpTo(MAX_PAGE_SIZE);

export interface PagingInput {
  /** Without it, every item from the cursor on, and no NextToken. */
  readonly maxResults?: number;
  readonly nextToken?: string;
}

/** EC2's rule for the instance describes: ids or pages, not both (its own words for it). */
export const NOT_IDS_AND_PAGES = {
  path: ['MaxResults'],
  ...coded('InvalidParameterCombination', 'The parameter instancesSet cannot be used with the parameter maxResults'),
};

export function idsOrPages(p: { readonly instanceIds: readonly string[]; readonly paging: PagingInput }): boolean {
  return p.instanceIds.length === 0 || p.paging.maxResults === undefined;
}

/** An empty NextToken is the first page, as EC2 takes it (scripts often start their loop with ''). */
export function pagingInputOf(p: { readonly MaxResults?: number | undefined; readonly NextToken?: string | undefined }): PagingInput {
  return {
    ...(p.MaxResults !== undefined ? { maxResults: p.MaxResults } : {}),
    ...(p.NextToken !== undefined && p.NextToken !== '' ? { nextToken: p.NextToken } : {}),
  };
}

/**
 * Where the request's NextToken says to go on (undefined: from the start). Read before anything is
 * asked of the CCs, so a bad token costs nothing; it never makes a key.
 */
export function cursorOf<K>(state: ClcState, scope: PageScope, order: Pick<PageOrder<unknown, K>, 'readKey'>, paging: PagingInput, now: number): K | undefined {
  if (paging.nextToken === undefined) return undefined;
  const key = pagingKeyOf(state);
  const reading = key === undefined
    ? { ok: false as const, reason: 'it was not issued by this cloud' }
    : readPageToken(key, paging.nextToken, scope, (json) => order.readKey(json), now);
  if (!reading.ok) throw ClcErrors.make('InvalidPaginationToken', { detail: reading.reason });
  return reading.cursor;
}

export interface ServedPage<T> {
  readonly items: readonly T[];
  /** Present only when more items follow the page. */
  readonly nextToken?: string;
}

/** The page of `sorted` after `cursor`, with a NextToken for the rest. */
export async function servePage<T, K>(
  store: Store<ClcState>, scope: PageScope, order: PageOrder<T, K>, sorted: readonly T[], cursor: K | undefined, paging: PagingInput, now: number,
): Promise<ServedPage<T>> {
  const page = takePage(sorted, order, cursor, paging.maxResults);
  if (page.next === undefined) return { items: page.items };
  const key = await ensurePagingKey(store);
  return { items: page.items, nextToken: issuePageToken(key, scope, order.writeKey(page.next), now) };
}
