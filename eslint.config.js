// Lint rules from ../shared/STYLE.md habit 12: floating promises, import cycles, type-only imports.
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

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
  { files: ['cc/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/nc/**'] }] } },
  { files: ['nc/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/cc/**'] }] } },
  { files: ['shared/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: ['**/clc/**', '**/cc/**', '**/nc/**'] }] } },
);
