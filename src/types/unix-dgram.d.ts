// Minimal typing of the parts of unix-dgram fieldgate uses (the package ships no types).
declare module 'unix-dgram' {
  import type { EventEmitter } from 'node:events';
  interface UnixDgramSocket extends EventEmitter {
    send(buf: Buffer, offset: number, length: number, path: string, callback?: (err?: Error) => void): void;
    bind(path: string): void;
    close(): void;
  }
  function createSocket(type: 'unix_dgram', listener?: (msg: Buffer) => void): UnixDgramSocket;
  const unixDgram: { createSocket: typeof createSocket };
  export default unixDgram;
}
