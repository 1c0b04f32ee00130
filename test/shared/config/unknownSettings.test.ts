import { describe, expect, it } from 'vitest';
import { unknownSettings } from '../../../shared/config/unknownSettings.js';

describe('unknownSettings', () => {
  const known = ['FERRY_CC_HOST', 'FERRY_CC_PORT'];
  it.each([
    ['known variables only', { FERRY_CC_HOST: '127.0.0.1', FERRY_CC_PORT: '1' }, []],
    ['other prefixes are not ours to judge', { FERRY_CLC_HSOT: 'x', PATH: '/bin', FERRY_LOG_LEVEL: 'info' }, ['']],
    ['a misspelt key', { FERRY_CC_HSOT: 'x' }, ['FERRY_CC_HSOT']],
    ['several, sorted', { FERRY_CC_Z: 'x', FERRY_CC_A: 'y' }, ['FERRY_CC_A', 'FERRY_CC_Z']],
    ['an unset one (undefined) is not there', { FERRY_CC_GONE: undefined }, []],
  ])('%s', (_what, env, want) => {
    const got = unknownSettings(env, 'FERRY_CC_', known).map((p) => p.split(':')[0]);
    expect(got).toEqual(want.filter((w) => w !== ''));
  });
});
