import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A condition polled for (a live update, a browser's rendering) may take seconds on a loaded
    // 2-core machine; 1 s, the default, made such waits fail there while nothing was wrong.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    // Two cores: integration suites start their own redis-server / nats-server;
    // running too many at once only adds noise.
    maxWorkers: 2,
    reporters: ['default', './test/harness/summary-reporter.ts'],
  },
});
