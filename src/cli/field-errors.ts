// Turns engine errors into the one-line explanations an integrator on site needs, worded for the
// kind of bus that failed: a TCP peer gets network advice, a serial line gets wiring advice.
import type { BusConfig } from '../core/config/site-types.js';
import {
  LineEchoError, ModbusCrcError, ModbusEngineError, ModbusExceptionError, ModbusTimeoutError, PortClosedError, PortOpenError,
} from '../field/modbus/errors.js';

export type BusKind = BusConfig['kind'];

const TCP_OPEN_HINTS: ReadonlyArray<[RegExp, string]> = [
  [/ECONNREFUSED/, 'nothing accepts connections there: check the IP address and port (Modbus TCP is usually 502) and that the device is on'],
  [/ENOTFOUND|EAI_AGAIN/, 'the host name does not resolve: check its spelling, or give the IP address'],
  [/EHOSTUNREACH|ENETUNREACH/, 'no route to that host: check the IP address, the network cable and this box\'s own address and subnet'],
  [/ETIMEDOUT|no connection within/, 'the connection attempt got no answer: check the IP address, that the device is on and on this network, and any firewall'],
  [/ECONNRESET/, 'the device dropped the connection at once: it may accept only a few clients (is another master connected?) or only certain addresses'],
];

const SERIAL_OPEN_HINTS: ReadonlyArray<[RegExp, string]> = [
  [/No such file or directory|ENOENT/, 'no such serial device: check the path (ls /dev/serial/by-id/ /dev/ttyUSB* /dev/ttyAMA*) and that the adapter is plugged in'],
  [/Permission denied|EACCES/, 'permission denied: add the user to the dialout group (sudo usermod -aG dialout $USER, then log in again)'],
  [/Cannot lock port|Resource temporarily unavailable|EBUSY/, 'the port is in use by another program (the fieldgate service? stop it first; fuser PATH shows who holds it)'],
  [/Inappropriate ioctl/, 'this is not a serial port: check the path'],
];

const TIMEOUT_HINTS: Record<BusKind, string> = {
  rtu: 'check the unit id, baud rate and parity, and that the RS-485 A/B wires are not swapped',
  tcp: 'the connection is up but the device did not answer: check the unit id (many devices answer only unit 1 or 255; a gateway passes it to its serial line), and that it speaks Modbus TCP (a serial server passing RTU frames needs --rtu-over-tcp)',
  'rtu-over-tcp': 'the converter is reachable but no unit answered behind it: check the unit id, the converter\'s serial settings (baud rate, parity), the A/B wires on its RS-485 side, and that it passes RTU frames (a Modbus TCP gateway needs no --rtu-over-tcp)',
};

function firstHint(text: string, hints: ReadonlyArray<[RegExp, string]>): string | undefined {
  return hints.find(([pattern]) => pattern.test(text))?.[1];
}

function causeText(err: Error): string {
  const cause = err.cause;
  const code = typeof cause === 'object' && cause !== null ? Reflect.get(cause, 'code') : undefined;
  return `${err.message} ${typeof code === 'string' ? code : ''}`;
}

function explainOpen(err: PortOpenError, kind: BusKind): string {
  if (kind === 'rtu') return `${err.message}: ${firstHint(causeText(err), SERIAL_OPEN_HINTS) ?? 'is the path right and are you in the dialout group?'}`;
  return `${err.message}: ${firstHint(causeText(err), TCP_OPEN_HINTS) ?? 'check the address and port and that the device is reachable from this box'}`;
}

function explainException(err: ModbusExceptionError, kind: BusKind): string {
  if (err.code === 2) return `${err.message}: the address is not in the device map (0-based? try address-1)`;
  if (err.code === 1) return `${err.message}: the device does not support this function/table`;
  if (err.isGatewayNoResponse && kind !== 'rtu') return `${err.message}: a gateway could not reach unit ${err.unit} on its serial side: check the unit id and the gateway's serial settings and wiring`;
  return err.message;
}

export function explainFieldError(err: unknown, kind: BusKind): string {
  if (err instanceof ModbusTimeoutError) return `${err.message}: ${TIMEOUT_HINTS[kind]}`;
  if (err instanceof ModbusExceptionError) return explainException(err, kind);
  if (err instanceof ModbusCrcError) {
    return kind === 'rtu-over-tcp' ? `${err.message}: noise or wrong baud/parity on the converter's serial side` : kind === 'rtu' ? `${err.message}: noise or wrong baud/parity on the line` : err.message;
  }
  if (err instanceof LineEchoError) {
    const flag = err.problem === 'echoes' ? ' (here: pass --echo)' : err.problem === 'missing' ? ' (here: leave out --echo)' : '';
    return `${err.message}${flag}`;
  }
  if (err instanceof PortOpenError) return explainOpen(err, kind);
  if (err instanceof PortClosedError && kind !== 'rtu') return `${err.message}: the device closed the connection (it may allow one client at a time: is the fieldgate service or another master connected?)`;
  if (err instanceof ModbusEngineError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
