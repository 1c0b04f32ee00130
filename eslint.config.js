// Lint rules from ../shared/STYLE.md habit 12: floating promises, import cycles, type-only imports.
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

const OTHER_TIERS_THAN_CLC = { group: ['**/cc/**', '**/nc/**'], message: "A tier never imports another tier's internals (STYLE habit 8)." };
const BELOW_THE_API = {
  group: ['**/api/**'],
  message: 'clc/api is the top layer of the CLC (parse, core operation, render): below it, call clc/core instead.',
};
const BELOW_HA = {
  group: ['**/ha/**'],
  message: 'host HA (clc/ha) sits above the core: the core offers it operations and interfaces (clc/core/nodeHooks.ts), never the reverse.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bin/**', '.ferry-demo/**', '.ferry-test/**', 'eslint.config.js', 'vitest.config.ts'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      // A tier never imports another tier's internals (STYLE habit 8).
      'no-restricted-imports': 'off',
    },
  },
  // Tests walk parsed XML documents, which are untyped by nature.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  { files: ['clc/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/cc/**', '**/nc/**'] }] } },
  // Layers inside the CLC point one way (issue 17; docs/ARCHITECTURE.md, "Layers inside the CLC"): the
  // admin API (clc/api) on top; host HA (clc/ha) below it; the core operations (clc/core), the CC adapter
  // (clc/clusters) and the store (clc/state) below both. clc/main.ts alone assembles the API.
  // A later block replaces the tier rule above for its files, so each repeats the tier patterns
  // (as an object: ESLint takes strings or objects in one list, not both).
  {
    files: ['clc/ha/**/*.ts', 'clc/events/**/*.ts', 'clc/state/**/*.ts', 'clc/clcCore.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [OTHER_TIERS_THAN_CLC, BELOW_THE_API] }] },
  },
  {
    files: ['clc/core/**/*.ts', 'clc/clusters/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [OTHER_TIERS_THAN_CLC, BELOW_THE_API, BELOW_HA] }] },
  },
  { files: ['cc/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/nc/**'] }] } },
  { files: ['nc/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/cc/**'] }] } },
  { files: ['shared/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/cc/**', '**/nc/**'] }] } },
);
