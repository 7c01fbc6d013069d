// Turns engine errors into the one-line explanations an integrator on site needs.
import {
  LineEchoError, ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusTimeoutError, PortClosedError, PortOpenError,
} from '../field/modbus/errors.js';

export function explainFieldError(err: unknown): string {
  if (err instanceof ModbusTimeoutError) {
    return `${err.message}: check the unit id, baud rate and parity, and that the RS-485 A/B wires are not swapped`;
  }
  if (err instanceof ModbusExceptionError) {
    const hint = err.code === 2 ? ': the address is not in the device map (0-based? try address-1)' : err.code === 1 ? ': the device does not support this function/table' : '';
    return `${err.message}${hint}`;
  }
  if (err instanceof LineEchoError) {
    const flag = err.problem === 'echoes' ? ' (here: pass --echo)' : err.problem === 'missing' ? ' (here: leave out --echo)' : '';
    return `${err.message}${flag}`;
  }
  if (err instanceof ModbusCrcError) return `${err.message}: noise or wrong baud/parity on the line`;
  if (err instanceof PortOpenError) return `${err.message}: is the path right and are you in the dialout group?`;
  if (err instanceof PortClosedError || err instanceof ModbusEngineError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
