import { it } from 'vitest';
import { parseCcConfig } from '../../../cc/config.js';
it('x', () => {
for (const a of [[], ['--state-dir','/tmp/x','--nodes','127.0.0.2,127.0.0.2,10.0.0.1','--port','abc','--schedule-policy','x','--host','1.2.3.4'], ['--state-dir','/tmp/x','--bogus'], ['--state-dir','/tmp/x','--nodes','127.0.0.2, 127.0.0.3']]) {
  try { console.log(parseCcConfig(a, {FERRY_CC_PORT:'9999'})); } catch (e) { console.log(String(e)); }
}
});
