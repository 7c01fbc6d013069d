// A TCP listener that remembers its sockets so close() really ends every connection.
import net from 'node:net';
import type { Logger } from 'fieldgate/workspace-kit';

export interface TcpListener {
  host: string;
  /** The bound port (the chosen one when 0 was asked for). */
  port: number;
  connections(): number;
  close(): Promise<void>;
}

export interface ConnectionHandler {
  onData(chunk: Buffer): void;
  onClose(): void;
}

export async function listenTcp(
  host: string,
  port: number,
  logger: Logger,
  accept: (socket: net.Socket) => ConnectionHandler,
): Promise<TcpListener> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    logger.debug({ peer }, 'connection opened');
    const handler = accept(socket);
    socket.on('data', (chunk) => {
      try {
        handler.onData(chunk);
      } catch (err) {
        logger.error({ err, peer }, 'request handling failed');
      }
    });
    socket.on('error', (err) => logger.debug({ err, peer }, 'connection error'));
    socket.on('close', () => {
      sockets.delete(socket);
      handler.onClose();
      logger.debug({ peer }, 'connection closed');
    });
  });
  server.maxConnections = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'listener error'));
  const bound = server.address() as net.AddressInfo;
  return {
    host,
    port: bound.port,
    connections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
