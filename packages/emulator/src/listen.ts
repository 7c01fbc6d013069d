// Listening with a clear error: the one place the emulator's servers (device channel, app side) bind.
import type { AddressInfo, Server } from 'node:net';

/** Binds `server` (net, http or https) and returns the port chosen; rejects naming what and where. */
export async function listen(server: Server, port: number, host: string, what: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      // A port below 1024 (the vendor's Python sample's fixed 443) needs a privilege: say which.
      const hint = err.code === 'EACCES' && port > 0 && port < 1024 ? ' (a port below 1024 needs root or CAP_NET_BIND_SERVICE)' : '';
      reject(new Error(`cannot listen for ${what} on ${host}:${port}: ${err.message}${hint}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
