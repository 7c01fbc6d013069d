// modbus-serial's loosely typed errors (message strings, errno, modbusCode) mapped to our types,
// and the helpers the transport needs around its client (kept here so the adapter stays short).
import {
  ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusFrameError, ModbusTimeoutError, PortClosedError,
} from './errors.js';

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

const linePorts = new WeakMap<object, { takeUnmatched(): number }>();

/** The RTU port a client was made with (the client keeps it in a private field; we keep our own link). */
export function registerLinePort(client: object, port: { takeUnmatched(): number }): void {
  linePorts.set(client, port);
}

/**
 * Bytes an RTU-framed port (serial or RTU over TCP) holds beyond the frames it handed over: stale
 * input before a request, or a second frame after a reply. Taking them also forgets them, as a
 * master flushes its receive FIFO.
 */
export function takeUnmatchedInput(client: object): number {
  return linePorts.get(client)?.takeUnmatched() ?? 0;
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
