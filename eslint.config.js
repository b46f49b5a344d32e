import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', fetch: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', setImmediate: 'readonly', structuredClone: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', Response: 'readonly', Request: 'readonly', Headers: 'readonly', performance: 'readonly', queueMicrotask: 'readonly', document: 'readonly', window: 'readonly', WebSocket: 'readonly', localStorage: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Read configuration through src/config.ts only.' }],
    },
  },
  // Types flow downward (STYLE.md): the store and src/domain never import from a feature folder, and config from no store.
  {
    files: ['src/store/*/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./\\.\\./(?!domain/)[^./][^/]*/', message: 'A store imports only from the store and src/domain: move the shared record type to src/domain.' }] }] },
  },
  {
    files: ['src/store/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!domain/)[^./][^/]*/', message: 'A store imports only from the store and src/domain: move the shared record type to src/domain.' }] }] },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./', message: 'src/domain is the bottom layer: it imports nothing from the rest of the service.' }] }] },
  },
  {
    files: ['src/config.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\./(?!domain/)[^./][^/]*/', message: 'Config owns its types; it imports from no feature folder or store.' }] }] },
  },
  { files: ['src/config.ts', 'src/cli/**', 'scripts/**', 'test/**', 'bench/**', 'docs/examples/**', 'vitest.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // The dashboard runs in the browser.
  {
    files: ['web/**'],
    languageOptions: { globals: { location: 'readonly', history: 'readonly', addEventListener: 'readonly', navigator: 'readonly', confirm: 'readonly', crypto: 'readonly', Notification: 'readonly', BroadcastChannel: 'readonly', MessageEvent: 'readonly', MouseEvent: 'readonly', Event: 'readonly', HTMLFormElement: 'readonly', HTMLLIElement: 'readonly', Element: 'readonly', URLSearchParams: 'readonly', preact: 'readonly' } },
  },
  // The web chat widget runs on the business's pages.
  { files: ['widget/**'], languageOptions: { globals: { location: 'readonly' } } },
  // Tests read JSON response bodies loosely.
  { files: ['test/**', 'bench/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
