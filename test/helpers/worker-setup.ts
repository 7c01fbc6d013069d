// Per test file (vitest.config.ts setupFiles): the child guard, and its hooks. Registered before
// the file's own hooks, so with vitest's "stack" order its afterEach and afterAll run after the
// file's: a test's own cleanup always comes first.
import { afterAll, afterEach, beforeEach } from 'vitest';
import { ChildGuard } from './child-guard.js';

const KEY = Symbol.for('fieldgate.childGuard');
type WithGuard = typeof globalThis & { [KEY]?: ChildGuard };

function workerGuard(): ChildGuard {
  const global = globalThis as WithGuard;
  const existing = global[KEY];
  if (existing) return existing;
  const guard = new ChildGuard();
  guard.install();
  global[KEY] = guard;
  // The exit hook only: no signal handlers, since tests signal their own worker (an in-process
  // daemon's SIGHUP reload, its SIGTERM stop). A worker killed by a signal leaves its children to
  // the end-of-run check, which finds them by the run's marker.
  process.once('exit', () => guard.killAllNow());
  return guard;
}

const guard = workerGuard();

function report(running: readonly string[], when: string): void {
  if (running.length === 0) return;
  process.stderr.write(`child guard: ${running.length} child process(es) still running ${when}, ended as a group: ${running.map((c) => c.slice(0, 160)).join('; ')}\n`);
}

beforeEach(() => guard.enter('test'));
afterEach(async () => {
  guard.enter('file');
  report(await guard.end('test'), 'after the test');
});
afterAll(async () => {
  report(await guard.end('file'), 'after the file');
});
