// The commissioning hints match the kind of bus: network advice for TCP, wiring advice for RS-485.
import { describe, expect, it } from 'vitest';
import { explainFieldError, type BusKind } from '../../../src/cli/field-errors.js';
import { ModbusCrcError, ModbusExceptionError, ModbusTimeoutError, PortClosedError, PortOpenError } from '../../../src/field/modbus/errors.js';

const netError = (code: string, message: string) => Object.assign(new Error(message), { code });
const tcpOpen = (code: string, message: string) => new PortOpenError('192.168.1.50:502', message, { cause: netError(code, message) });
const serialOpen = (message: string) => new PortOpenError('/dev/ttyUSB0', message, { cause: new Error(message) });

const SERIAL_WORDS = /dialout|baud|parity|A\/B|RS-485 A/;

describe('explainFieldError', () => {
  it.each<[string, unknown, BusKind, RegExp]>([
    ['tcp refused', tcpOpen('ECONNREFUSED', 'connect ECONNREFUSED 192.168.1.50:502'), 'tcp', /nothing accepts connections there: check the IP address and port \(Modbus TCP is usually 502\)/],
    ['tcp unknown host', tcpOpen('ENOTFOUND', 'getaddrinfo ENOTFOUND plc.local'), 'tcp', /host name does not resolve/],
    ['tcp no route', tcpOpen('EHOSTUNREACH', 'connect EHOSTUNREACH 192.168.1.50:502'), 'tcp', /no route to that host/],
    ['tcp connect timeout', new PortOpenError('192.168.1.50:502', 'no connection within 2000 ms'), 'tcp', /connection attempt got no answer/],
    ['tcp reset', tcpOpen('ECONNRESET', 'read ECONNRESET'), 'rtu-over-tcp', /dropped the connection at once/],
    ['tcp other', tcpOpen('EWHATEVER', 'strange'), 'tcp', /check the address and port/],
    ['tcp unit silent', new ModbusTimeoutError(9, 200), 'tcp', /unit 9 did not answer within 200 ms: the connection is up but the device did not answer: check the unit id.*--rtu-over-tcp/],
    ['tcp closed by peer', new PortClosedError('connection closed by peer'), 'tcp', /one client at a time/],
    ['tcp gateway path', new ModbusExceptionError(4, 11), 'tcp', /a gateway could not reach unit 4 on its serial side/],
  ])('%s gets TCP advice, none about serial lines', (_name, err, kind, expected) => {
    const text = explainFieldError(err, kind);
    expect(text).toMatch(expected);
    expect(text).not.toMatch(SERIAL_WORDS);
  });

  it.each<[string, unknown, RegExp]>([
    ['no such device', serialOpen('No such file or directory, cannot open /dev/ttyUSB0'), /no such serial device: check the path/],
    ['no permission', serialOpen('Permission denied, cannot open /dev/ttyUSB0'), /add the user to the dialout group/],
    ['locked', serialOpen('Error Resource temporarily unavailable Cannot lock port'), /in use by another program/],
    ['not a tty', serialOpen('Inappropriate ioctl for device setting custom baud rate of 9600'), /not a serial port/],
    ['other', serialOpen('strange'), /is the path right and are you in the dialout group\?/],
    ['unit silent', new ModbusTimeoutError(3, 1000), /baud rate and parity, and that the RS-485 A\/B wires are not swapped/],
    ['crc', new ModbusCrcError(3), /noise or wrong baud\/parity on the line/],
  ])('serial %s gets serial advice', (_name, err, expected) => {
    expect(explainFieldError(err, 'rtu')).toMatch(expected);
  });

  it('sends RTU over TCP timeouts and CRC errors to the converter\'s serial side', () => {
    expect(explainFieldError(new ModbusTimeoutError(2, 500), 'rtu-over-tcp')).toMatch(/converter's serial settings \(baud rate, parity\), the A\/B wires on its RS-485 side/);
    expect(explainFieldError(new ModbusCrcError(2), 'rtu-over-tcp')).toMatch(/converter's serial side/);
    expect(explainFieldError(new ModbusCrcError(2), 'tcp')).toBe('unit 2: malformed reply: CRC error');
  });

  it('keeps the exception hints on every kind', () => {
    for (const kind of ['rtu', 'tcp', 'rtu-over-tcp'] as const) {
      expect(explainFieldError(new ModbusExceptionError(1, 2), kind)).toMatch(/not in the device map/);
      expect(explainFieldError(new ModbusExceptionError(1, 1), kind)).toMatch(/does not support/);
    }
    expect(explainFieldError(new Error('plain'), 'tcp')).toBe('plain');
    expect(explainFieldError('text', 'rtu')).toBe('text');
  });
});
