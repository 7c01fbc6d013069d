// What the RTU framer saw in an exchange, as the error that names it: an echo the bus setting does
// not expect, a reply of another length than asked, or bytes before or after the reply.
import type { LineVerdict } from './rtu-line-port.js';
import { LineEchoError, ModbusExceptionError, ModbusFrameError, ModbusLengthError } from './errors.js';

function echoError(verdict: LineVerdict, unit: number): LineEchoError | undefined {
  switch (verdict.echo) {
    case 'unexpected': return new LineEchoError(unit, 'echoes');
    case 'differs': return new LineEchoError(unit, 'differs');
    case 'missing': return new LineEchoError(unit, 'missing');
    default: return undefined;
  }
}

/** Why an exchange whose reply was accepted by the library must still fail; undefined when it need not. */
export function wireProblem(verdict: LineVerdict, unit: number): ModbusFrameError | undefined {
  const echo = echoError(verdict, unit);
  if (echo) return echo;
  if (verdict.lengthMismatch !== undefined) return new ModbusLengthError(unit, verdict.lengthMismatch);
  if (verdict.ambiguous !== undefined) return new ModbusFrameError(unit, verdict.ambiguous);
  // A late reply of another unit that timed out is no ambiguity (it cannot be this unit's reply).
  const unexplained = verdict.skipped + verdict.extra - verdict.lateBytes;
  if (unexplained <= 0) return undefined;
  if (verdict.extra > verdict.lateBytes) return new ModbusFrameError(unit, `${verdict.extra - verdict.lateBytes} bytes after the reply (duplicate or foreign frame)`);
  return new ModbusFrameError(unit, `${unexplained} bytes before the reply (late or foreign frame)`);
}

/** A frame error from the library (CRC, length) replaced by what the framer knows better. */
export function wireError(verdict: LineVerdict, unit: number, err: unknown): unknown {
  // An exception that may belong to an earlier request of the unit tells nothing about this one.
  if (verdict.ambiguous !== undefined && err instanceof ModbusExceptionError) return new ModbusFrameError(unit, verdict.ambiguous);
  if (!(err instanceof ModbusFrameError) || err instanceof LineEchoError || err instanceof ModbusLengthError) return err;
  const echo = echoError(verdict, unit);
  if (echo) return echo;
  if (verdict.lengthMismatch !== undefined) return new ModbusLengthError(unit, verdict.lengthMismatch);
  return err;
}
