import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS_PATH, renderConfigDocs, undocumentedVariables } from '../../scripts/gen-config-docs.js';

describe('docs/configuration.md is generated from the config schema', () => {
  it('describes every variable (a JSDoc comment in src/config.ts)', () => {
    expect(undocumentedVariables()).toEqual([]);
  });

  it('is not stale: npm run gen:config-docs', () => {
    expect(readFileSync(CONFIG_DOCS_PATH, 'utf8'), 'docs/configuration.md differs from what src/config.ts renders: run npm run gen:config-docs').toBe(renderConfigDocs());
  });
});
