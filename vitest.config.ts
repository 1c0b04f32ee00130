import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    // Integration tests start real daemons on loopback; each file uses its own 127.0.X.0/24.
    // Limits, not assertions: on a busy 2-core machine a cloud of real processes takes minutes to start.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
