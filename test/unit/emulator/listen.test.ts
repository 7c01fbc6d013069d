// The emulator's one bind helper: a refused bind names what, where and, for a privileged port, why.
import { EventEmitter } from 'node:events';
import type { Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { listen } from '../../../packages/emulator/src/listen.js';

/** A server whose listen() fails as the kernel would answer it. */
function refusingServer(code: string): Server {
  const server = new EventEmitter() as unknown as Server & EventEmitter;
  server.listen = ((..._args: unknown[]) => {
    const err = Object.assign(new Error(`listen ${code}: refused`), { code });
    queueMicrotask(() => server.emit('error', err));
    return server;
  }) as Server['listen'];
  return server;
}

describe('listen', () => {
  it('says a port below 1024 needs a privilege when the bind is not permitted', async () => {
    await expect(listen(refusingServer('EACCES'), 443, '127.0.0.1', 'app-side wss'))
      .rejects.toThrow('cannot listen for app-side wss on 127.0.0.1:443: listen EACCES: refused (a port below 1024 needs root or CAP_NET_BIND_SERVICE)');
  });

  it('gives no privilege hint for a high port or another error', async () => {
    await expect(listen(refusingServer('EACCES'), 18084, '127.0.0.1', 'app-side wss')).rejects.toThrow(/EACCES: refused$/);
    await expect(listen(refusingServer('EADDRINUSE'), 443, '127.0.0.1', 'app-side wss')).rejects.toThrow(/EADDRINUSE: refused$/);
  });
});
