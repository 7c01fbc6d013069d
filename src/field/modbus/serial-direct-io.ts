// serialport's Unix binding reads and writes through libuv's thread pool: each received chunk is
// a poll wake-up plus a pool round trip, and so is each request written (about 0.1 ms apiece, a
// tenth of a 115200 transaction counted with both silences, and CPU on every exchange). Once the
// port is open, its binding's read and write are replaced by direct calls on the descriptor it
// opened non-blocking: wait for the binding's poller to say 'readable', then read at once; write
// at once, and leave to the binding's own write only what the kernel did not take. Errors keep the
// binding's meaning (a canceled wait stays canceled, EIO/ENXIO/EBADF is a disconnect).
import { readSync, writeSync } from 'node:fs';

interface Poller {
  once(event: 'readable', callback: (err: Error | null) => void): unknown;
}

/** The part of serialport's opened Unix binding port this replaces. */
interface UnixBindingPort {
  fd: number | null;
  poller: Poller;
  read(buffer: Buffer, offset: number, length: number): Promise<{ bytesRead: number; buffer: Buffer }>;
  write(buffer: Buffer): Promise<void>;
}

const RETRY_CODES = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR']);
const DISCONNECT_CODES = new Set(['EBADF', 'ENXIO', 'EIO', 'UNKNOWN']);

function isUnixBindingPort(port: unknown): port is UnixBindingPort {
  if (typeof port !== 'object' || port === null) return false;
  const candidate = port as Partial<Record<keyof UnixBindingPort, unknown>>;
  return typeof candidate.fd === 'number' && typeof candidate.read === 'function' && typeof candidate.write === 'function'
    && typeof candidate.poller === 'object' && candidate.poller !== null
    && typeof (candidate.poller as { once?: unknown }).once === 'function';
}

function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function notOpen(): Error {
  return Object.assign(new Error('Port is not open'), { canceled: true });
}

function asDisconnect(err: unknown): unknown {
  if (err instanceof Error && DISCONNECT_CODES.has(errorCode(err) ?? '')) Object.assign(err, { disconnect: true });
  return err;
}

function readable(poller: Poller): Promise<void> {
  return new Promise((resolve, reject) => {
    poller.once('readable', (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * Switches an opened serialport port (SerialPort's `port`) to direct reads and writes; false (and
 * nothing changed) when it is not a Unix binding port (another platform, a mock binding).
 */
export function useDirectIo(port: unknown): boolean {
  if (!isUnixBindingPort(port)) return false;
  const bindingWrite = port.write.bind(port);
  port.read = async (buffer, offset, length) => {
    for (;;) {
      await readable(port.poller);
      const fd = port.fd;
      if (fd === null) throw notOpen();
      try {
        const bytesRead = readSync(fd, buffer, offset, length, null);
        if (bytesRead > 0) return { bytesRead, buffer };
      } catch (err) {
        if (!RETRY_CODES.has(errorCode(err) ?? '')) throw asDisconnect(err);
      }
    }
  };
  port.write = async (buffer) => {
    const fd = port.fd;
    if (fd === null) throw new Error('Port is not open');
    let written = 0;
    try {
      written = writeSync(fd, buffer);
    } catch (err) {
      if (!RETRY_CODES.has(errorCode(err) ?? '')) throw asDisconnect(err);
    }
    if (written < buffer.length) await bindingWrite(buffer.subarray(written));
  };
  return true;
}
