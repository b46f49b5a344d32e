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
  { files: ['src/config.ts', 'src/cli/**', 'scripts/**', 'test/**', 'bench/**', 'vitest.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // The dashboard runs in the browser.
  {
    files: ['web/**'],
    languageOptions: { globals: { location: 'readonly', history: 'readonly', addEventListener: 'readonly', navigator: 'readonly', confirm: 'readonly', crypto: 'readonly', Notification: 'readonly', BroadcastChannel: 'readonly', MessageEvent: 'readonly', MouseEvent: 'readonly', Event: 'readonly', HTMLFormElement: 'readonly', HTMLLIElement: 'readonly', Element: 'readonly', URLSearchParams: 'readonly', preact: 'readonly' } },
  },
  // Tests read JSON response bodies loosely.
  { files: ['test/**', 'bench/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
