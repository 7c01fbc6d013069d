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
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
