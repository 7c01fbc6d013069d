// Adapter: the only simulator file that touches `serialport`. Opens a port as a plain byte line.
import { SerialPort } from 'serialport';
import { useDirectIo } from 'fieldgate/workspace-kit';
import type { LineSettings } from './timing.js';

export interface SerialLine {
  write(bytes: Buffer): void;
  close(): Promise<void>;
}

export interface SerialLineEvents {
  onData(chunk: Buffer): void;
  onError(err: Error): void;
  /** The port went away (device unplugged, pty peer closed). */
  onClose(): void;
}

export async function openSerialLine(path: string, settings: LineSettings, events: SerialLineEvents): Promise<SerialLine> {
  const port = new SerialPort({
    path,
    baudRate: settings.baud,
    parity: settings.parity,
    dataBits: settings.dataBits as 7 | 8,
    stopBits: settings.stopBits as 1 | 2,
    autoOpen: false,
    // ptys and some USB adapters refuse exclusive locks; the simulator owns its end anyway.
    lock: false,
  });
  await new Promise<void>((resolve, reject) => {
    port.open((err) => (err ? reject(new Error(`cannot open serial port ${path}: ${err.message}`)) : resolve()));
  });
  // Replies leave at once instead of after a thread-pool round trip (baud-accurate timing).
  useDirectIo(port.port);
  let closing = false;
  port.on('data', (chunk: Buffer) => events.onData(chunk));
  port.on('error', (err: Error) => events.onError(err));
  port.on('close', () => {
    if (!closing) events.onClose();
  });
  return {
    write: (bytes) => {
      if (port.isOpen) port.write(bytes, (err) => err && events.onError(err));
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        if (!port.isOpen) {
          resolve();
          return;
        }
        port.close(() => resolve());
      }),
  };
}
