// The field side of a running gateway: one Bus per line and one Poller per bus that has devices,
// built at start and changed part by part by a reload (a bus added, removed or restarted; a device
// added to or removed from its bus's poller) without touching the others.
import type { LevelWithSilent } from 'pino';
import type { CompiledDevice, CompiledSite } from '../core/config/compile.js';
import type { BusConfig, SiteConfig } from '../core/config/site-types.js';
import { systemTimers } from '../core/time.js';
import { CommandService } from '../device/commands.js';
import { BusDeviceIo } from '../device/device-io.js';
import { WriteSequencers } from '../device/write-sequencer.js';
import { Poller, type SampleSink } from '../device/poller.js';
import { Bus } from '../field/modbus/bus.js';
import { capturedTransport, type LineCaptures } from '../field/modbus/line-capture.js';
import { createModbusTransport } from '../field/modbus/transport.js';
import type { TransportFactory } from '../field/modbus/transport-types.js';
import { componentLogger, type Logger } from './log.js';

export interface Southbound {
  readonly buses: ReadonlyMap<string, Bus>;
  readonly pollers: ReadonlyMap<string, Poller>;
  /** Bus kinds by name, for status. */
  readonly kinds: ReadonlyMap<string, BusConfig['kind']>;
  /** Each device's write order, kept across reloads that replace it (write-sequencer.ts). */
  readonly writeOrder: WriteSequencers;
  start(): void;
  /** Pollers first, then the buses they use. */
  stop(): Promise<void>;
  /** A bus of `site` (its concurrent units taken from its devices), opened at once when running; no devices yet. */
  addBus(config: BusConfig, site: SiteConfig): void;
  /** Stops the bus's poller (its devices) and closes the bus. */
  removeBus(name: string): Promise<void>;
  /** A device joins its bus's poller (created for its first device). */
  addDevice(device: CompiledDevice): void;
  /** A device leaves its bus's poller (dropped with its last device: an idle poller would look stalled). */
  removeDevice(name: string, bus: string): Promise<void>;
}

/**
 * One Bus per line, one Poller per bus with that bus's devices. `cloudShare`: share of each bus's
 * time cloud work may take while polls wait. `captures`: when given, each line's transactions can
 * be watched (the commissioning page's line view), one LineCapture per bus kept there.
 */
export function createSouthbound(
  site: SiteConfig, compiled: CompiledSite, sink: SampleSink, logger: Logger, levels?: ReadonlyMap<string, LevelWithSilent>, cloudShare = 1,
  captures?: LineCaptures,
): Southbound {
  const transportFactory: TransportFactory = captures === undefined ? createModbusTransport : (config) => {
    return capturedTransport(createModbusTransport(config), captures.open(config.name));
  };
  const busLog = componentLogger(logger, 'bus', levels);
  const pollLog = componentLogger(logger, 'poller', levels);
  const buses = new Map<string, Bus>();
  const pollers = new Map<string, Poller>();
  const kinds = new Map<string, BusConfig['kind']>();
  const writeOrder = new WriteSequencers(componentLogger(logger, 'commands', levels));
  let running = false;

  const southbound: Southbound = {
    buses, pollers, kinds, writeOrder,
    start() {
      running = true;
      for (const bus of buses.values()) bus.start();
      for (const poller of pollers.values()) poller.start();
    },
    async stop() {
      running = false;
      await Promise.all([...pollers.values()].map((p) => p.stop()));
      await Promise.all([...buses.values()].map((b) => b.stop()));
    },
    addBus(config, current) {
      const concurrentUnits = new Set(current.devices.filter((d) => d.bus === config.name && d.limits.concurrent).map((d) => d.unitId));
      const bus = new Bus({ config, transportFactory, logger: busLog, highShare: cloudShare, concurrentUnits });
      buses.set(config.name, bus);
      kinds.set(config.name, config.kind);
      if (running) bus.start();
    },
    async removeBus(name) {
      const poller = pollers.get(name);
      pollers.delete(name);
      await poller?.stop();
      const bus = buses.get(name);
      buses.delete(name);
      kinds.delete(name);
      captures?.delete(name);
      await bus?.stop();
    },
    addDevice(device) {
      const name = device.config.bus;
      const bus = buses.get(name);
      if (!bus) throw new Error(`device "${device.config.name}" is on bus "${name}", which does not run`);
      const poller = pollers.get(name);
      if (poller) return poller.addDevice(device);
      const created = new Poller({ bus, devices: [device], sink, logger: pollLog.child({ bus: name }) });
      pollers.set(name, created);
      if (running) created.start();
    },
    async removeDevice(name, busName) {
      const poller = pollers.get(busName);
      if (!poller) return;
      await poller.removeDevice(name);
      if (poller.deviceNames().length > 0) return;
      pollers.delete(busName);
      await poller.stop();
    },
  };
  for (const config of site.buses) southbound.addBus(config, site);
  for (const device of compiled.devices) if (buses.has(device.config.bus)) southbound.addDevice(device);
  return southbound;
}

/** One device's command path, planning its reads with what its poller learned; undefined when its bus does not run. */
export function createCommandService(device: CompiledDevice, southbound: Southbound, logger: Logger): CommandService | undefined {
  const { config } = device;
  const bus = southbound.buses.get(config.bus);
  if (!bus) return undefined;
  const learned = () => southbound.pollers.get(config.bus)?.readLimits(config.name) ?? {};
  return new CommandService(device, config.commands, new BusDeviceIo(bus, config, systemTimers), logger, learned, southbound.writeOrder.of(config.name));
}

/** Per device: the command path of that device. */
export function createCommandServices(compiled: CompiledSite, southbound: Southbound, logger: Logger): Map<string, CommandService> {
  const commands = new Map<string, CommandService>();
  for (const device of compiled.devices) {
    const service = createCommandService(device, southbound, logger);
    if (service) commands.set(device.config.name, service);
  }
  return commands;
}
