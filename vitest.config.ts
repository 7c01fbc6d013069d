import { defineConfig } from 'vitest/config';

// Workspace packages and `fieldgate/shared` resolve to their TypeScript sources (the
// "fieldgate-source" export condition), so tests never run a stale dist/.
const conditions = ['fieldgate-source', 'module', 'node', 'development|production'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['fieldgate-source'] } },
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The Debian test peers before any test runs (installed as root, else one message naming
    // them), and at the end a check that no process the run started is left.
    globalSetup: ['./test/helpers/peers-setup.ts'],
    // Every child a test starts in its own process group, ended with the test (child-guard.ts).
    setupFiles: ['./test/helpers/worker-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
