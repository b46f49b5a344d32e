import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

/** The widget is one file every visitor downloads: the build fails when it grows past this, gzipped. */
const MAX_GZIP_BYTES = 30 * 1024;

function sizeLimit(): Plugin {
  return {
    name: 'widget-size-limit',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (file.type !== 'chunk') continue;
        const gz = gzipSync(file.code).length;
        if (gz > MAX_GZIP_BYTES) this.error(`${file.fileName} is ${gz} bytes gzipped, over the widget's limit of ${MAX_GZIP_BYTES}`);
      }
    },
  };
}

// The web chat widget: one classic script (IIFE) at dist/widget/widget.js, served as /widget.js (src/webchat/http.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  publicDir: false,
  logLevel: 'info',
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  plugins: [sizeLimit()],
  build: {
    outDir: fileURLToPath(new URL('../dist/widget', import.meta.url)),
    emptyOutDir: true,
    target: 'es2019',
    sourcemap: false,
    reportCompressedSize: true,
    lib: { entry: fileURLToPath(new URL('./src/main.ts', import.meta.url)), formats: ['iife'], name: 'SwitchboardWidget', fileName: () => 'widget.js' },
  },
});
