/** The replicated demo's verdict on a drain (scripts/drainVerdict.ts): every way an instance can be lost, doubled or left behind is named. */
import { describe, expect, it } from 'vitest';
import { drainProblems } from '../../scripts/drainVerdict.js';

const S = '127.0.103.1';
const D = '127.0.103.2';
const E = '127.0.103.3';
const m = (o: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(o));
const before = m({ 'i-00000001': [S], 'i-00000002': [S], 'i-00000003': [E] });

describe('drainProblems', () => {
  it.each<[string, Record<string, string[]>, string, string[]]>([
    ['a clean drain: the source\'s instances moved, the others stayed', { 'i-00000001': [D], 'i-00000002': [E], 'i-00000003': [E] }, 'completed', []],
    ['one lost', { 'i-00000001': [D], 'i-00000003': [E] }, 'completed', ['i-00000002 is lost: it runs nowhere']],
    ['one running twice (source and destination)', { 'i-00000001': [S, D], 'i-00000002': [E], 'i-00000003': [E] }, 'completed', [`i-00000001 is duplicated: it runs on ${S} and ${D}`]],
    ['one left on the source of a completed drain', { 'i-00000001': [S], 'i-00000002': [E], 'i-00000003': [E] }, 'completed', [`i-00000001 still runs on the drained ${S}`]],
    ['a stranger appeared', { 'i-00000001': [D], 'i-00000002': [E], 'i-00000003': [E], 'i-0000beef': [D] }, 'completed', [`i-0000beef runs on ${D} but did not before the drain`]],
    ['the drain failed: instances left on the source are no loss, the failure is named', { 'i-00000001': [S], 'i-00000002': [D], 'i-00000003': [E] }, 'failed', ['the drain ended failed, not completed']],
  ])('%s', (_, after, state, expected) => {
    expect(drainProblems({ before, after: m(after), source: S, migrationState: state })).toEqual(expected);
  });
});
