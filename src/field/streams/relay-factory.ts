// Chooses the endpoint of one configured stream (a bus line shared with Modbus, a serial port or a
// TCP target) and builds its relay to the cloud.
import type { StreamConfig } from '../../core/config/command-types.js';
import type { BackoffConfig } from '../../core/config/site-types.js';
import { systemTimers } from '../../core/time.js';
import type { Logger } from '../../core/logger.js';
import { BusLineEndpoint, type RawLine } from './bus-endpoint.js';
import type { ByteEndpoint } from './endpoint.js';
import { StreamRelay } from './relay.js';
import { SerialEndpoint } from './serial-endpoint.js';
import { TcpEndpoint } from './tcp-endpoint.js';

export function createStreamRelay(
  stream: StreamConfig, buses: ReadonlyMap<string, RawLine>, reconnect: BackoffConfig,
  publish: (id: string, data: Buffer) => Promise<void>, logger: Logger,
): StreamRelay | undefined {
  const target = stream.target;
  let endpoint: ByteEndpoint;
  if (target.kind === 'bus') {
    const bus = buses.get(target.bus);
    // The site file check makes this unreachable; a missing bus must still not crash the gateway.
    if (!bus) return void logger.error({ stream: stream.identifier, bus: target.bus }, 'stream bus not found; stream disabled');
    endpoint = new BusLineEndpoint(bus, stream);
  } else {
    endpoint = target.kind === 'serial' ? new SerialEndpoint(target) : new TcpEndpoint(target);
  }
  return new StreamRelay({ config: stream, endpoint, publish, logger, timers: systemTimers, reconnect });
}
