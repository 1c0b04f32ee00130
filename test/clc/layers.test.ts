/**
 * The CLC's layers point one way (issue 17), and the linter is what holds them: a file below the
 * admin API that imports it, or a core file that imports host HA, is an error of
 * no-restricted-imports (eslint.config.js), while the same import from the API is fine.
 */
import { ESLint, type Linter } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The project's own config (eslint.config.js), with only its no-restricted-imports settings and
 * without the TypeScript program the type-aware rules need: building that program reads the whole
 * tree, which other tests change while they run, and a failed build would lint nothing at all.
 */
async function layerLinter(): Promise<ESLint> {
  const path = '../../eslint.config.js';
  const { default: config } = (await import(path)) as { default: Linter.Config[] };
  const layered = config.map((c): Linter.Config => ({
    ...(c.files ? { files: c.files } : {}),
    ...(c.ignores ? { ignores: c.ignores } : {}),
    ...(c.languageOptions?.parser ? { languageOptions: { parser: c.languageOptions.parser } } : {}),
    ...(c.rules?.['no-restricted-imports'] !== undefined ? { rules: { 'no-restricted-imports': c.rules['no-restricted-imports'] } } : {}),
  }));
  return new ESLint({ cwd: process.cwd(), overrideConfigFile: true, overrideConfig: layered });
}
let eslint: ESLint;

/** The no-restricted-imports messages for `text` linted as if it were the file at `filePath`; a file that does not parse fails. */
async function restrictions(filePath: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath });
  const fatal = (result?.messages ?? []).filter((m) => m.fatal === true);
  if (fatal.length > 0) throw new Error(`${filePath} was not linted: ${fatal.map((m) => m.message).join('; ')}`);
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the CLC layers, as the linter enforces them', () => {
  beforeAll(async () => { eslint = await layerLinter(); }, 60_000);

  it.each([
    ['clc/core/zones.ts', "import { ClcErrors } from './errors.js';\nimport { renderError } from '../api/xmlResponse.js';\nexport const x = [ClcErrors, renderError];\n"],
    ['clc/clusters/fanOut.ts', "import { findAction } from '../api/actions/index.js';\nexport const x = findAction;\n"],
    ['clc/ha/haState.ts', "import type { ActionContext } from '../api/action.js';\nexport type X = ActionContext;\n"],
    ['clc/ha/cloud/ccSources.ts', "import { migrateInstances } from '../../api/actions/migrateInstances.js';\nexport const x = migrateInstances;\n"],
    ['clc/state/pagingKey.ts', "import { ADMIN_ACCOUNT_ID } from '../api/auth.js';\nexport const x = ADMIN_ACCOUNT_ID;\n"],
    ['clc/clcCore.ts', "import { buildClcApp } from './api/app.js';\nexport const x = buildClcApp;\n"],
  ])('%s may not import clc/api', async (file, text) => {
    expect(await restrictions(file, text)).toEqual([expect.stringContaining('clc/api is the top layer of the CLC')]);
  });

  it.each([
    ['clc/core/zones.ts', "import { HaErrors } from '../ha/errors.js';\nexport const x = HaErrors;\n"],
    ['clc/clusters/fanOut.ts', "import type { HaRunner } from '../ha/haRunner.js';\nexport type X = HaRunner;\n"],
  ])('%s may not import clc/ha', async (file, text) => {
    expect(await restrictions(file, text)).toEqual([expect.stringContaining('host HA (clc/ha) sits above the core')]);
  });

  it.each([
    ['clc/api importing the core and HA', 'clc/api/actions/modifyService.ts', "import { changeNodeState } from '../../core/nodeState.js';\nimport { HaErrors } from '../../ha/errors.js';\nexport const x = [changeNodeState, HaErrors];\n"],
    ['clc/ha importing the core', 'clc/ha/haState.ts', "import { planMigration } from '../core/planMigration.js';\nexport const x = planMigration;\n"],
  ])('%s: downward imports pass', async (_what, file, text) => {
    expect(await restrictions(file, text)).toEqual([]);
  });

  it('the tier rule still holds in the layered files (no CC or NC code in the core)', async () => {
    expect(await restrictions('clc/core/zones.ts', "import { x } from '../../cc/view.js';\nexport const y = x;\n")).toHaveLength(1);
  });
});
