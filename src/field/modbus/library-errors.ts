// modbus-serial's loosely typed errors (message strings, errno, modbusCode) mapped to our types,
// and the bits of its internals the transport reaches into (kept here so the adapter stays short).
import {
  ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusFrameError, ModbusTimeoutError, PortClosedError,
} from './errors.js';
import type { RawPort } from './raw-exchange.js';

export function mapLibraryError(err: unknown, unit: number, timeoutMs: number): ModbusEngineError {
  if (err instanceof ModbusEngineError) return err;
  const fields = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : {};
  const message = typeof fields.message === 'string' ? fields.message : String(err);
  if (typeof fields.modbusCode === 'number') return new ModbusExceptionError(unit, fields.modbusCode);
  if (fields.errno === 'ETIMEDOUT' || message === 'Timed out') return new ModbusTimeoutError(unit, timeoutMs);
  if (message === 'CRC error') return new ModbusCrcError(unit);
  if (message.startsWith('Data length error') || message.startsWith('Unexpected data error')) {
    return new ModbusFrameError(unit, message);
  }
  if (message === 'Port Not Open') return new PortClosedError('port not open');
  return new ModbusEngineError(`unit ${unit}: ${message}`, { cause: err });
}

/** The port object inside a modbus-serial client (`_port`). */
export function libraryPortOf(client: object): unknown {
  return Reflect.get(client, '_port');
}

/** The serialport instance inside modbus-serial's buffered RTU port (`_port._client`). */
export function serialPortOf(client: object): RawPort | undefined {
  const port = libraryPortOf(client);
  const serial: unknown = typeof port === 'object' && port !== null ? Reflect.get(port, '_client') : undefined;
  if (typeof serial !== 'object' || serial === null) return undefined;
  const has = (name: string) => typeof Reflect.get(serial, name) === 'function';
  return has('write') && has('drain') && has('on') && has('off') ? (serial as RawPort) : undefined;
}

/**
 * Bytes an RTU-framed port (serial or RTU over TCP) holds beyond the frames it handed over: stale
 * input before a request, or a second frame after a reply. Taking them also empties the buffer,
 * as a master flushes its receive FIFO.
 */
export function takeUnmatchedInput(client: object): number {
  const port = libraryPortOf(client);
  if (typeof port !== 'object' || port === null) return 0;
  const buffer: unknown = Reflect.get(port, '_buffer');
  if (!Buffer.isBuffer(buffer)) return 0;
  if (buffer.length > 0) Reflect.set(port, '_buffer', Buffer.alloc(0));
  return buffer.length;
}

/** Tears down a client whose open failed or timed out, whatever state it is in. */
export function destroyQuietly(client: { destroy(cb: () => void): void; close(cb: () => void): void }): void {
  try {
    client.destroy(() => undefined);
    client.close(() => undefined);
  } catch {
    // already closed or never opened
  }
}
