// The libc calls Node lacks, through koffi's FFI (prebuilt on the npm registry, no compiler): the
// only importer of koffi. Loaded on first use, so a process that needs none never loads koffi.
import { createRequire } from 'node:module';
import { constants as osConstants } from 'node:os';
import type * as Koffi from 'koffi';

export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  sendto(fd: number, message: Buffer, length: number, flags: number, address: Buffer, addressLength: number): number;
  close(fd: number): number;
  flock(fd: number, operation: number): number;
  /** Sleeps `micros` on a thread of libuv's pool (not this one), then calls `done` on this thread. */
  sleepMicros(micros: number, done: () => void): void;
  /** errno of the last call that failed. */
  errno(): number;
}

let loaded: Libc | undefined;

export function libc(): Libc {
  if (loaded) return loaded;
  const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
  const lib = koffi.load(null);
  loaded = {
    socket: lib.func('int socket(int, int, int)') as Libc['socket'],
    sendto: lib.func('intptr_t sendto(int, const void *, size_t, int, const void *, uint32_t)') as Libc['sendto'],
    close: lib.func('int close(int)') as Libc['close'],
    flock: lib.func('int flock(int, int)') as Libc['flock'],
    sleepMicros: sleeper(lib.func('int usleep(uint32_t)') as Koffi.KoffiFunc<(micros: number) => number>),
    errno: () => koffi.errno(),
  };
  return loaded;
}

/** usleep through koffi's asynchronous call: the wait happens off the event loop, sub-millisecond. */
function sleeper(usleep: Koffi.KoffiFunc<(micros: number) => number>): Libc['sleepMicros'] {
  return (micros, done) => {
    usleep.async(Math.max(1, Math.ceil(micros)), () => done());
  };
}

/** An Error for a failed call, its code the errno's name (EAGAIN, ...). */
export function errnoError(call: string, errno: number): Error & { code: string } {
  const code = errnoName(errno);
  return Object.assign(new Error(`${call} failed: ${code}`), { code });
}

export function errnoName(errno: number): string {
  return Object.entries(osConstants.errno).find(([, value]) => value === errno)?.[0] ?? `errno ${errno}`;
}
