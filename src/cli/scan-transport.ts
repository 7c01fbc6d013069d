// The transport a whole-bus scan (--sunspec, --identify) runs on: opened, or the reason on stderr.
import type { BusConfig } from '../core/config/site-types.js';
import { createModbusTransport, type ModbusTransport } from '../field/modbus/transport.js';
import { explainFieldError } from './field-errors.js';
import type { CliIo } from './io.js';

export async function openScanTransport(bus: BusConfig, io: CliIo): Promise<ModbusTransport | undefined> {
  const transport = createModbusTransport(bus);
  try {
    await transport.open();
    return transport;
  } catch (err) {
    io.stderr.write(`fieldgate scan: ${explainFieldError(err, bus.kind)}\n`);
    return undefined;
  }
}
