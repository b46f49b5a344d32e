import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The dashboard: built into dist/web, which the service serves (src/http/web-app.ts).
export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  logLevel: 'info',
  // Never the development JSX transform (file names and line numbers in every element), even when
  // the build is started from a test run, where NODE_ENV is "test".
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: false } },
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    reportCompressedSize: true,
    assetsInlineLimit: 0,
  },
});
