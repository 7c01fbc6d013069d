import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Workspace packages and `fieldgate/workspace-kit` resolve to their TypeScript sources (the
// "fieldgate-source" export condition), so tests never run a stale dist/.
const conditions = ['fieldgate-source', 'module', 'node', 'development|production'];

// Most files wait on sockets, timers and child processes rather than on the CPU, so vitest's
// default (CPUs - 1: one worker on a 2-core box) leaves the machine idle for most of a run:
// they run 2 x CPUs at once. Files whose verdict depends on the machine answering in time run
// afterwards, at most one per CPU (CALM_FILES). FIELDGATE_TEST_WORKERS=N caps both (1: one file
// at a time, to rule out interference).
const cpus = availableParallelism();
function workers(wanted: number): number {
  const asked = Number(process.env['FIELDGATE_TEST_WORKERS']);
  return Number.isInteger(asked) && asked > 0 ? Math.min(asked, wanted) : wanted;
}

// Serial lines over pty pairs (RTU frames are cut by silences of a few ms: a starved process
// splits or merges them), the bus's timeouts and late replies, the share and streams on a line,
// and the 100-device and CPU-heavy files (poll gaps, reload times, every shipped profile).
const CALM_FILES = [
  'test/integration/modbus/**/*.test.ts',
  'test/integration/share/**/*.test.ts',
  'test/integration/streams/**/*.test.ts',
  'test/integration/cli/commissioning.test.ts',
  'test/integration/cli/answer-time.test.ts',
  'test/integration/demo/demo-terminal.test.ts',
  'test/system/wire-faults.test.ts',
  'test/system/stream-e2e.test.ts',
  'test/system/reload.test.ts',
  'test/system/reload-storm.test.ts',
  'test/unit/profiles/profiles-check.test.ts',
  'test/unit/config/robustness.test.ts',
];

// `npm test` runs the two groups as two vitest runs at once (test/run-suite.ts): each keeps its own
// cache of file durations (longest first next time).
const group = process.env['FIELDGATE_TEST_GROUP'];

export default defineConfig({
  ...(group === undefined ? {} : { cacheDir: `node_modules/.vite-${group}` }),
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['fieldgate-source'] } },
  test: {
    pool: 'forks',
    // Deadlines, not measurements: generous, since files share the CPUs.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The Debian test peers before any test runs (installed as root, else one message naming
    // them), and at the end a check that no process the run started is left.
    globalSetup: ['./test/helpers/peers-setup.ts'],
    // Every child a test starts in its own process group, ended with the test (child-guard.ts).
    setupFiles: ['./test/helpers/worker-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'busy', include: ['test/**/*.test.ts'], exclude: CALM_FILES, maxWorkers: workers(Math.max(2, 2 * cpus)), sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'calm', include: CALM_FILES, maxWorkers: workers(Math.max(1, cpus)), sequence: { groupOrder: 1 } },
      },
    ],
  },
});
