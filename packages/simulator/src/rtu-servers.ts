// RTU on a serial port and RTU frames over TCP, both served by RtuSession.
import type { Logger } from 'fieldgate/workspace-kit';
import { RtuSession, type LineState } from './rtu-session.js';
import { openSerialLine } from './serial-line.js';
import type { Simulator } from './simulator.js';
import { listenTcp, type TcpListener } from './tcp-listener.js';
import { lineTiming, type LineSettings } from './timing.js';

export interface RtuServerOptions {
  simulator: Simulator;
  logger: Logger;
  line: LineSettings;
  /** Answer only after the wire time the transaction would take on a real line. */
  baudAccurate?: boolean;
  /** Silence that ends an unknown frame / drops a partial one (ms). */
  silenceMs?: number;
  /** The line echoes every request byte back before the reply (RS-485 local echo). */
  echo?: boolean;
  /** Ignore (and count) requests that begin less than t3.5 after the previous frame. */
  strict?: boolean;
}

export interface SerialRtuServer {
  path: string;
  close(): Promise<void>;
}

export async function startSerialRtuServer(path: string, options: RtuServerOptions): Promise<SerialRtuServer> {
  const logger = options.logger.child({ transport: 'rtu', path });
  let session: RtuSession | undefined;
  const line = await openSerialLine(path, options.line, {
    onData: (chunk) => {
      try {
        session?.feed(chunk);
      } catch (err) {
        logger.error({ err }, 'request handling failed');
      }
    },
    onError: (err) => logger.warn({ err }, 'serial port error'),
    onClose: () => logger.warn('serial port closed'),
  });
  session = new RtuSession({
    simulator: options.simulator,
    logger,
    write: (bytes) => line.write(bytes),
    timing: lineTiming(options.line),
    baudAccurate: options.baudAccurate,
    silenceMs: options.silenceMs,
    echo: options.echo,
    strict: options.strict,
  });
  const opened = session;
  return {
    path,
    close: async () => {
      opened.close();
      await line.close();
    },
  };
}

/** RTU framing (with CRC) carried on TCP, as a serial-to-Ethernet converter would; one line per connection. */
export async function startRtuOverTcpServer(host: string, port: number, options: RtuServerOptions): Promise<TcpListener> {
  const logger = options.logger.child({ transport: 'rtu-over-tcp' });
  const timing = lineTiming(options.line);
  // All connections reach the same simulated serial line.
  const line: LineState = { busyUntilMicros: 0 };
  return listenTcp(host, port, logger, (socket) => {
    const session = new RtuSession({
      simulator: options.simulator,
      logger,
      write: (bytes) => {
        if (socket.writable) socket.write(bytes);
      },
      timing,
      baudAccurate: options.baudAccurate,
      silenceMs: options.silenceMs,
      echo: options.echo,
      strict: options.strict,
      line,
    });
    return { onData: (chunk) => session.feed(chunk), onClose: () => session.close() };
  });
}
