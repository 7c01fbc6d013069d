// Every child process a test file starts (itself, through a helper, a library or the code under
// test) gets its own process group and the run's marker, and ends with the test that started it:
// the test's own cleanup runs first, then whatever is still there gets SIGTERM, then SIGKILL, as
// a group. Children started outside a test (beforeAll) end with the file. An exit hook and the
// stop signals end the rest when the worker goes. Loaded per worker (vitest.config.ts setupFiles).
import childProcess, { type ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
import { RUN_MARKER } from './leftovers.js';
import { endGroup, signalGroup } from './process-groups.js';

export type ChildScope = 'test' | 'file';

interface Tracked {
  child: ChildProcess;
  scope: ChildScope;
}

type AnyFunction = (...args: never[]) => unknown;

export class ChildGuard {
  private readonly tracked = new Set<Tracked>();
  private current: ChildScope = 'file';

  /** Children started from now on belong to this scope. */
  enter(scope: ChildScope): void {
    this.current = scope;
  }

  /** Options for a new child: its own group unless the caller said otherwise, and the marker in a given env. */
  options<T extends { detached?: boolean; env?: NodeJS.ProcessEnv } | undefined>(options: T): T & { detached: boolean } {
    const marker = process.env[RUN_MARKER];
    const env = options?.env !== undefined && marker !== undefined ? { ...options.env, [RUN_MARKER]: marker } : options?.env;
    return { ...options, detached: options?.detached ?? true, ...(env === undefined ? {} : { env }) } as T & { detached: boolean };
  }

  track(child: ChildProcess): ChildProcess {
    const entry: Tracked = { child, scope: this.current };
    this.tracked.add(entry);
    // An exited leader stays tracked until its scope ends: its group may still have members.
    return child;
  }

  /** Ends the scope's children still running (and their groups); returns how many were still running. */
  async end(scope: ChildScope | 'all'): Promise<string[]> {
    const ending = [...this.tracked].filter((t) => scope === 'all' || t.scope === scope || (scope === 'file' && t.scope === 'test'));
    const running = ending.filter((t) => t.child.exitCode === null && t.child.signalCode === null).map((t) => t.child.spawnargs.join(' '));
    for (const t of ending) this.tracked.delete(t);
    await Promise.all(ending.map((t) => endGroup(t.child, 2000)));
    return running;
  }

  /** At once, for an exiting worker: SIGKILL to every tracked group. */
  killAllNow(): void {
    for (const t of this.tracked) signalGroup(t.child, 'SIGKILL');
    this.tracked.clear();
  }

  /** Wraps child_process so every asynchronous child goes through this guard. */
  install(cp: typeof childProcess = childProcess): void {
    const guard = this;
    const spawn = cp.spawn;
    const fork = cp.fork;
    const execFile = cp.execFile;
    const exec = cp.exec;
    // spawn(cmd, [args], [options]) and fork(module, [args], [options])
    const withArgs = (original: AnyFunction) => function guarded(this: unknown, target: string, ...rest: unknown[]): ChildProcess {
      const args = Array.isArray(rest[0]) ? rest.shift() as string[] : [];
      const options = guard.options(rest[0] as Parameters<ChildGuard['options']>[0]);
      return guard.track((original as (...a: unknown[]) => ChildProcess).call(this, target, args, options));
    };
    // execFile(file, [args], [options], [callback]) and exec(command, [options], [callback])
    const withCallback = (original: AnyFunction, takesArgs: boolean) => {
      const guarded = function (this: unknown, target: string, ...rest: unknown[]): ChildProcess {
        const callback = typeof rest[rest.length - 1] === 'function' ? rest.pop() : undefined;
        const args = takesArgs && Array.isArray(rest[0]) ? [rest.shift()] : [];
        const options = guard.options((rest[0] ?? undefined) as Parameters<ChildGuard['options']>[0]);
        return guard.track((original as (...a: unknown[]) => ChildProcess).call(this, target, ...args, options, ...(callback ? [callback] : [])));
      };
      // promisify(execFile) resolves { stdout, stderr } like Node's own, with .child on the promise.
      Object.defineProperty(guarded, promisify.custom, {
        value: (...params: unknown[]) => {
          let child: ChildProcess | undefined;
          const promise = new Promise((resolve, reject) => {
            child = guarded.call(undefined, ...(params as [string]), (err: Error | null, stdout: unknown, stderr: unknown) => {
              if (err) reject(Object.assign(err, { stdout, stderr }));
              else resolve({ stdout, stderr });
            });
          });
          return Object.assign(promise, { child });
        },
      });
      return guarded;
    };
    Object.assign(cp, {
      spawn: withArgs(spawn),
      fork: withArgs(fork),
      execFile: withCallback(execFile, true),
      exec: withCallback(exec, false),
    });
    syncBuiltinESMExports(); // `import { spawn } from 'node:child_process'` sees the guarded one too
  }
}
