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

/** Tears down a client whose open failed or timed out, whatever state it is in. */
export function destroyQuietly(client: { destroy(cb: () => void): void; close(cb: () => void): void }): void {
  try {
    client.destroy(() => undefined);
    client.close(() => undefined);
  } catch {
    // already closed or never opened
  }
}
