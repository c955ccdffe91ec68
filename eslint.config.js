// Lint for the whole tree: type-aware TypeScript rules, and the import rules
// that keep the architecture's picture (docs/design.md) from drifting.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const CONTROL_PLANE = {
  group: ['**/control-plane/**'],
  message: 'The proxy and the bench talk to the control plane only through the wire contract in shared/contract/.',
};
const PROXY = { group: ['**/proxy/**'], message: 'The control plane never imports the proxy: shared code goes in shared/.' };
const HALVES = { group: ['**/control-plane/**', '**/proxy/**'], message: 'shared/ imports neither half.' };
const SCIM_FROM_STORES = { group: ['../scim/**'], message: 'Stores never import the SCIM HTTP layer.' };
const STORES = { group: ['**/stores/**'], message: 'Routes call services; only services call stores.' };
// `../../scim/` from services/<area>/ is the SCIM HTTP layer (control-plane/scim/); the SCIM services live in
// services/scim/, which services reach as `../scim/` and stores may not reach at all (SCIM_FROM_STORES).
const HTTP = {
  group: ['**/http/**', '**/console/**', '**/internal/**', '**/sso/index.js', '**/web/**', '../../scim/**'],
  message: 'Services never import the HTTP layer.',
};

/** One no-restricted-imports per directory: a later block replaces an earlier one's list, so each lists all it forbids. */
const restrict = (files, ...patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'control-plane/web/public/', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Koa and node:http take async handlers by design.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, properties: false } }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // Off: with noUncheckedIndexedAccess off, `rows[0]!` states an invariant the reader should see.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Off: some functions are async to keep one shape across implementations (stores, holds, fakes).
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // A function too long to name or test in parts is a closure doing several jobs (issue: the 337-line edge handler).
    files: ['proxy/**', 'control-plane/**', 'shared/**', 'bench/**'],
    rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  restrict(['proxy/**', 'bench/**'], CONTROL_PLANE),
  restrict(['shared/**'], HALVES),
  restrict(['control-plane/**'], PROXY),
  restrict(['control-plane/services/**'], PROXY, HTTP),
  restrict(['control-plane/stores/**'], PROXY, HTTP, SCIM_FROM_STORES),
  restrict(
    [
      'control-plane/console/**',
      'control-plane/sso/**',
      'control-plane/internal/**',
      'control-plane/web/**',
      'control-plane/http/**',
      'control-plane/scim/**',
      'control-plane/local-admin.ts',
    ],
    PROXY,
    STORES,
  ),
  {
    // An ES module import of node:http loads Node's bundled undici (shared/node-http.ts says why); types are free.
    files: ['proxy/**', 'control-plane/**', 'shared/**', 'bin/**'],
    ignores: ['shared/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        ...['node:http', 'http'].map((name) => ({ name, allowTypeImports: true, message: 'Take node:http values from shared/node-http.ts.' })),
      ],
    },
  },
  {
    // Tests read JSON answers as untyped values and assert on them: chai is the check, not the compiler.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // chai's property assertions (`.to.be.NaN`) are expressions.
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  prettier,
);
