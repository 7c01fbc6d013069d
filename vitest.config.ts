import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages and `fieldgate/shared` resolve to their TypeScript sources (the
// "fieldgate-source" export condition), so tests never run a stale dist/.
const conditions = ['fieldgate-source', 'module', 'node', 'development|production'];

// Most files wait on sockets, timers and child processes rather than on the CPU, so vitest's
// default (CPUs - 1: one worker on a 2-core box) leaves the machine idle for most of a run.
// FIELDGATE_TEST_WORKERS=1 runs the files one at a time (to rule out interference).
function testWorkers(): number {
  const asked = Number(process.env['FIELDGATE_TEST_WORKERS']);
  if (Number.isInteger(asked) && asked > 0) return asked;
  return Math.max(2, availableParallelism() * 2);
}

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['fieldgate-source'] } },
  test: {
    pool: 'forks',
    maxWorkers: testWorkers(),
    include: ['test/**/*.test.ts'],
    // Deadlines, not measurements: generous, since files share the CPUs (testWorkers above).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The Debian test peers before any test runs (installed as root, else one message naming
    // them), and at the end a check that no process the run started is left.
    globalSetup: ['./test/helpers/peers-setup.ts'],
    // Every child a test starts in its own process group, ended with the test (child-guard.ts).
    setupFiles: ['./test/helpers/worker-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
